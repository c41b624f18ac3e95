"""The judge call: the only module that imports pydantic-evals and pydantic-ai.

A case is judged exactly as pydantic-evals' ``LLMJudge(include_input=True,
include_expected_output=True)`` judges it: the same judge agent, system prompt and
``<Input>/<Output>/<ExpectedOutput>/<Rubric>`` wrapping. The verdict schema is widened from
LLMJudge's ``{reason, pass, score}`` to BENCHMARK_FORMAT's optional ``confidence`` and
``uncertain``, and the prompt file's SYSTEM section is sent as the run's instructions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, StrictBool, ValidationError
from pydantic_ai import models
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from ..compile.request import CompiledRequest
from ..cost.spending import priced_usage
from ..models.batching import send
from ..models.classify import classify
from ..models.config import JudgeConfig, RequestTemplate
from ..models.identity import answered_by
from .agent_call import billed_run
from .one_voice import OneVoiceModel, as_sent
from .sent_text import output_schemas, sent_text
from .verdict import JudgeFailure, Usage, Verdict

if TYPE_CHECKING:
    pass

OUTPUT_RETRIES = 2


class JudgeVerdict(BaseModel, populate_by_name=True):
    """The JSON object the judge returns.

    ``pass`` and ``uncertain`` are strict booleans: only JSON ``true``/``false`` count, never
    ``"yes"``, ``"true"``, ``1`` or ``1.0`` (an answer like that is invalid output, retried).
    """

    reason: str = Field(description="50-200 characters citing the key evidence for the verdict.")
    pass_: StrictBool = Field(validation_alias="pass", serialization_alias="pass")
    score: float | None = None
    confidence: Literal["high", "medium", "low"] | None = None
    uncertain: StrictBool = Field(
        default=False, description="True when the case is ambiguous; implies pass = false."
    )


def user_prompt(request: CompiledRequest) -> str | Sequence[Any]:
    """LLMJudge's user prompt for ``request``."""
    # pydantic-evals (0.2 s to import) is loaded on the first judge call, not for a cached run.
    from .evals_adapter import build_prompt

    return build_prompt(request.inputs, request.output, request.expected_output, request.rubric)


def load_llmjudge() -> None:
    """Import pydantic-evals' LLMJudge now, on the calling (main) thread.

    Imported on the scheduler's thread instead, every file it reads hands the GIL to a main
    thread busy collecting and waits up to 5 ms to get it back: 0.1 s of imports took 0.35 s
    and held back the first judge call.
    """
    import pydantic_evals.evaluators.llm_as_a_judge  # noqa: F401


def _agent() -> Any:
    """LLMJudge(include_input=True, include_expected_output=True) always uses this agent, whatever
    the request; a case without ground truth simply has no <ExpectedOutput> section."""
    from .evals_adapter import judge_agent

    return judge_agent()


class _Captured(Exception):
    """Carries the request an agent was about to send; stops the run before anything is sent."""

    def __init__(
        self, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> None:
        super().__init__("captured")
        self.messages = messages
        self.settings = settings
        self.params = params


class _CaptureModel(WrapperModel):
    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        raise _Captured(messages, model_settings, model_request_parameters)


async def capture_template(
    request: CompiledRequest, model: models.Model, settings: ModelSettings | None
) -> RequestTemplate | None:
    """The request LLMJudge's agent would send to ``model`` for ``request``; None if not reusable."""
    try:
        await _agent().run(
            user_prompt(request),
            model=OneVoiceModel(_CaptureModel(model), request.prompt_style),
            model_settings=settings,
            output_type=JudgeVerdict,
            instructions=request.instructions or None,
        )  # no output is ever read: the first request stops the run
    except _Captured as captured:
        first = captured.messages
        if len(first) == 1 and isinstance(first[0], ModelRequest):
            prompts = [p for p in first[0].parts if isinstance(p, UserPromptPart)]
            if len(prompts) == 1:
                _, resolved = model.prepare_request(captured.settings, captured.params)
                accepts_text = resolved.output_mode in {"native", "prompted"}
                schemas = output_schemas(resolved)
                return RequestTemplate(first[0], captured.settings, captured.params, accepts_text, schemas)
    return None


def _template_key(request: CompiledRequest) -> tuple[str, str]:
    return (str(_agent().name), request.instructions)


async def judge_once(request: CompiledRequest, config: JudgeConfig) -> tuple[Verdict, Usage]:
    """One judge call (with pydantic-ai's bounded output-validation retries); raises ``JudgeFailure``."""
    try:
        return await _judge(request, config)
    except Exception as exc:  # every failure becomes an ERROR item, never a crash
        raise classify(exc) from exc


async def _template(request: CompiledRequest, config: JudgeConfig) -> RequestTemplate | None:
    """The configuration's captured request for ``request``'s agent, captured by the first caller."""
    key = _template_key(request)
    if key in config.templates:
        return config.templates[key]
    task = config.capturing.get(key)
    if task is None:
        task = asyncio.ensure_future(capture_template(request, config.model, config.settings))
        config.capturing[key] = task
    try:
        template = await asyncio.shield(task)  # one waiter cancelled (-x) leaves the others theirs
    finally:
        if task.done() and config.capturing.get(key) is task:
            del config.capturing[key]  # a failed capture is tried again by the next call
    config.templates[key] = template
    return template


async def _judge(request: CompiledRequest, config: JudgeConfig) -> tuple[Verdict, Usage]:
    if request.prompt_style != "no_reasoning":
        return await _judge_text(request, config)
    template = await _template(request, config)
    if template is None:
        return await _run_agent(request, config, [])
    messages = template.messages(user_prompt(request))
    # a batched judge's request is submitted (or collected) and answered once its batch ends
    response = await send(config.model, messages, template.settings, template.params)
    chars = len(sent_text(messages, template.schemas))
    usage = priced_usage(config.price, [response], request_chars=chars)
    verdict_calls = _verdict_calls(response, template)
    if verdict_calls > 1:
        raise JudgeFailure(
            "invalid-output",
            f"the judge gave {verdict_calls} verdicts (tool calls); exactly one is expected",
            True,
            usage=usage,
        )
    answer = _final_answer(response, template)
    if answer is not None:
        return _verdict(answer, [response]), usage
    if response.state != "complete" or any(isinstance(p, ToolCallPart) for p in response.parts):
        # An invalid or extra tool call, a paused response: the agent takes the conversation from
        # here exactly as it would have (validation feedback, bounded retries, resumption).
        return await _run_agent(request, config, [*messages, response], request_chars=chars)
    if template.accepts_text:  # asked for JSON text (native or prompted output), and it is no verdict
        raise JudgeFailure("invalid-output", _not_a_verdict(response), True, usage=usage)
    # A text answer where the verdict tool call was due: the agent would read JSON text as the
    # verdict, but a judge that ignores the output tool is not answering the schema it was given.
    raise JudgeFailure(
        "invalid-output", "the judge answered in text instead of the verdict tool call", True, usage=usage
    )


def _not_a_verdict(response: ModelResponse) -> str:
    """Why a JSON-text answer is not a verdict: pydantic's first complaint, where it is."""
    answer = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    try:
        JudgeVerdict.model_validate_json(answer)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"the judge's JSON answer is not a verdict: {first['msg']}" + (f" at {where}" if where else "")
    return "the judge's JSON answer is not a verdict"


def _verdict_calls(response: ModelResponse, template: RequestTemplate) -> int:
    names = {t.name for t in template.params.output_tools}
    return sum(1 for p in response.parts if isinstance(p, ToolCallPart) and p.tool_name in names)


def _final_answer(response: ModelResponse, template: RequestTemplate) -> JudgeVerdict | None:
    """The verdict of a complete response the agent would accept as it is, else None."""
    if response.state != "complete":
        return None
    calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
    try:
        if calls:
            if len(calls) != 1 or calls[0].tool_name not in {t.name for t in template.params.output_tools}:
                return None
            args = calls[0].args
            if isinstance(args, str):
                return JudgeVerdict.model_validate_json(args)
            return JudgeVerdict.model_validate(args or {})
        if template.accepts_text:
            return JudgeVerdict.model_validate_json(
                "".join(p.content for p in response.parts if isinstance(p, TextPart))
            )
    except ValidationError:
        return None
    return None


async def _judge_text(request: CompiledRequest, config: JudgeConfig) -> tuple[Verdict, Usage]:
    """Chain-of-thought styles: the judge reasons in text and the verdict is read from it."""
    from .verdict_text import parse_verdict

    ran = await billed_run(
        _agent(),
        user_prompt(request),
        config,
        OneVoiceModel(config.model, request.prompt_style),
        # counted as sent: the system prompt rewritten for the style, as the estimate counts it
        lambda messages: len(sent_text(as_sent(messages[:1], request.prompt_style, tool=False), [])),
        output_type=str,
        instructions=request.instructions or None,
    )
    messages, usage = ran.messages, ran.usage
    parsed = parse_verdict(ran.output, finish_reason=ran.response.finish_reason)
    if parsed.error is not None:  # no verdict: what kept it from being read
        kind = parsed.error.type
        # A reply cut off at the token limit will be cut off again: only unreadable ones retry.
        raise JudgeFailure(kind, parsed.error.message, kind != "truncation", usage=usage)
    assert parsed.verdict is not None and parsed.format is not None  # read: both are known
    verdict = replace(parsed.verdict, format=parsed.format, answered=answered_by(messages))
    return verdict, usage


async def _run_agent(
    request: CompiledRequest, config: JudgeConfig, history: list[ModelMessage], request_chars: int = 0
) -> tuple[Verdict, Usage]:
    """The agent's run, from the start or (``history``) from the first request and its response."""
    ran = await billed_run(
        _agent(),
        None if history else user_prompt(request),
        config,
        OneVoiceModel(config.model, request.prompt_style),
        lambda _: request_chars,
        # the history's response (sent before this run) counts: every response in the messages is one
        earlier_requests=1 if history else 0,
        message_history=history or None,
        output_type=JudgeVerdict,
        instructions=request.instructions or None,
        retries=OUTPUT_RETRIES,
    )
    return _verdict(ran.output, ran.messages), ran.usage


def _verdict(out: JudgeVerdict, messages: Sequence[ModelMessage]) -> Verdict:
    answered = answered_by(messages)
    return Verdict(out.pass_, out.reason, out.score, out.confidence, out.uncertain, answered=answered)
