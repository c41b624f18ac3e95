"""The judge call: the only module that imports pydantic-evals and pydantic-ai.

A case is judged exactly as pydantic-evals' ``LLMJudge(include_input=True,
include_expected_output=True)`` judges it: the same judge agent, system prompt and
``<Input>/<Output>/<ExpectedOutput>/<Rubric>`` wrapping. The verdict schema is widened from
LLMJudge's ``{reason, pass, score}`` to BENCHMARK_FORMAT's optional ``confidence`` and
``uncertain``, and the prompt file's SYSTEM section is sent as the run's instructions.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic_ai import models
from pydantic_ai.exceptions import (
    ContentFilterError,
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelServerError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings
from pydantic_evals.evaluators.llm_as_a_judge import (
    _build_prompt,  # noqa: PLC2701  (LLMJudge's own prompt assembly)
    _judge_input_output_expected_agent,  # noqa: PLC2701
    _judge_output_agent,  # noqa: PLC2701
)

from .compile import CompiledRequest
from .verdict import JudgeFailure, Usage, Verdict

OUTPUT_RETRIES = 2


class JudgeVerdict(BaseModel, populate_by_name=True):
    """The JSON object the judge returns."""

    reason: str = Field(description="50-200 characters citing the key evidence for the verdict.")
    pass_: bool = Field(validation_alias="pass", serialization_alias="pass")
    score: float | None = None
    confidence: Literal["high", "medium", "low"] | None = None
    uncertain: bool = Field(default=False, description="True when the case is ambiguous; implies pass = false.")


@dataclass(frozen=True)
class JudgeConfig:
    """One judge configuration: a resolved model and its settings."""

    model: models.Model
    model_name: str
    settings: ModelSettings

    def settings_key(self) -> dict[str, Any]:
        return {k: self.settings.get(k) for k in sorted(self.settings)}  # type: ignore[literal-required]


def user_prompt(request: CompiledRequest) -> str | Sequence[Any]:
    """LLMJudge's user prompt for ``request``."""
    prompt, _ = _build_prompt(
        inputs=request.inputs,
        output=request.output,
        expected_output=request.expected_output,
        rubric=request.rubric,
    )
    return prompt


def _agent(request: CompiledRequest) -> Any:
    return _judge_input_output_expected_agent if request.expected_output is not None else _judge_output_agent


async def judge_once(request: CompiledRequest, config: JudgeConfig) -> tuple[Verdict, Usage]:
    """One judge run (with pydantic-ai's bounded output-validation retries); raises ``JudgeFailure``."""
    try:
        result = await _agent(request).run(
            user_prompt(request),
            model=config.model,
            model_settings=config.settings,
            output_type=JudgeVerdict,
            instructions=request.instructions or None,
            retries=OUTPUT_RETRIES,
        )
    except Exception as exc:  # every failure becomes an ERROR item, never a crash
        raise classify(exc) from exc
    out: JudgeVerdict = result.output
    usage = result.usage
    return (
        Verdict(out.pass_, out.reason, out.score, out.confidence, out.uncertain),
        Usage(usage.requests, usage.input_tokens or 0, usage.output_tokens or 0),
    )


def classify(exc: BaseException) -> JudgeFailure:
    """Map a judge-call exception to a ``JudgeFailure`` saying whether a retry can help."""
    if isinstance(exc, JudgeFailure):
        return exc
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(exc, ModelHTTPError):
        status = exc.status_code
        transient = status in {408, 409, 425, 429} or status >= 500
        kind = "rate-limited" if status == 429 else f"http-{status}"
        hint = {401: " (check the API key)", 403: " (access denied)", 400: " (bad request)"}.get(status, "")
        return JudgeFailure(kind, f"HTTP {status} from {exc.model_name}{hint}: {exc.body}", transient, retry_after)
    if isinstance(exc, ModelRateLimitError):
        return JudgeFailure("rate-limited", str(exc), True, retry_after)
    if isinstance(exc, ModelRequestRejectedError):
        return JudgeFailure("rejected", str(exc), False)
    if isinstance(exc, ModelConnectionError | ModelServerError | ModelUnavailableError):
        return JudgeFailure("transport", str(exc), True, retry_after)
    if isinstance(exc, ModelAPIError):
        return JudgeFailure("api-error", str(exc), False, retry_after)
    if isinstance(exc, ContentFilterError):
        return JudgeFailure("refusal", f"the judge refused to answer: {exc}", False)
    if isinstance(exc, UnexpectedModelBehavior):
        return JudgeFailure("invalid-output", f"judge output did not validate: {exc}", True)
    if isinstance(exc, UsageLimitExceeded):
        return JudgeFailure("usage-limit", str(exc), False)
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return JudgeFailure("timeout", "the judge call timed out", True)
    if isinstance(exc, ConnectionError | OSError):
        return JudgeFailure("transport", f"{type(exc).__name__}: {exc}", True)
    return JudgeFailure("judge-error", f"{type(exc).__name__}: {exc}", False)


def render_messages(request: CompiledRequest) -> str:
    """The exact messages and output schema the judge model is sent, as readable text."""
    captured: dict[str, Any] = {}

    def capture(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        captured["messages"] = messages
        captured["info"] = info
        args = {"reason": "snapshot", "pass": True}
        if info.output_tools:
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
        return ModelResponse(parts=[TextPart(json.dumps(args))])

    model = FunctionModel(capture, model_name="snapshot")
    asyncio.run(_agent(request).run(user_prompt(request), model=model, output_type=JudgeVerdict, instructions=request.instructions or None))
    return _format_request(captured["messages"], captured["info"])


def _format_request(messages: list[ModelMessage], info: AgentInfo) -> str:
    lines: list[str] = []
    for message in messages:
        if getattr(message, "instructions", None):
            lines += ["=== instructions ===", str(getattr(message, "instructions")).strip()]
        for part in message.parts:
            kind = getattr(part, "part_kind", type(part).__name__)
            content = getattr(part, "content", "")
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            lines += [f"=== {kind} ===", text.strip()]
    for tool in info.output_tools:
        lines += [f"=== output schema ({tool.name}) ===", json.dumps(tool.parameters_json_schema, indent=2, sort_keys=True)]
    return "\n".join(lines) + "\n"


class ModelConfigError(Exception):
    """A judge model that cannot be built from its configuration."""


def model_label(model: models.Model) -> str:
    return f"{model.system}:{model.model_name}"


def build_model(value: str | models.Model, base_url: str | None = None) -> models.Model:
    """A pydantic-ai model from a model string (``openai:…``, ``anthropic:…``, …) or object.

    With ``base_url`` the model name is served by an OpenAI-compatible server (vLLM, Ollama,
    llama.cpp): ``openai:NAME`` or plain ``NAME`` both work.
    """
    if isinstance(value, models.Model):
        return value
    if base_url:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        name = value.split(":", 1)[1] if value.startswith("openai:") else value
        key = os.environ.get("LLMJUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"
        return OpenAIChatModel(name, provider=OpenAIProvider(base_url=base_url, api_key=key))
    try:
        return models.infer_model(value)
    except Exception as exc:  # pydantic-ai raises UserError and provider-specific errors here
        raise ModelConfigError(f"cannot use judge model {value!r}: {exc}") from None


def model_settings(temperature: float | None, max_tokens: int | None, timeout: float | None) -> ModelSettings:
    settings = ModelSettings()
    if temperature is not None:
        settings["temperature"] = temperature
    if max_tokens is not None:
        settings["max_tokens"] = max_tokens
    if timeout is not None:
        settings["timeout"] = timeout
    return settings
