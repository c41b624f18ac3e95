"""The judge call: the only module that imports pydantic-evals and pydantic-ai.

A case is judged exactly as pydantic-evals' ``LLMJudge(include_input=True,
include_expected_output=True)`` judges it: the same judge agent, system prompt and
``<Input>/<Output>/<ExpectedOutput>/<Rubric>`` wrapping. The verdict schema is widened from
LLMJudge's ``{reason, pass, score}`` to BENCHMARK_FORMAT's optional ``confidence`` and
``uncertain``, and the prompt file's SYSTEM section is sent as the run's instructions.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import random
import uuid
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, Field, StrictBool, ValidationError
from pydantic_ai import capture_run_messages, models
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
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from ..compile.request import CompiledRequest
from .response_cap import UnreadableResponse
from .spending import priced_usage
from .verdict import JudgeFailure, Usage, Verdict

if TYPE_CHECKING:
    from .pricing import Price

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


@dataclass(frozen=True)
class JudgeConfig:
    """One judge configuration: a resolved model and its settings.

    ``templates`` holds the request LLMJudge's agent builds for this configuration, captured once
    per agent and instructions (see ``RequestTemplate``); ``capturing`` the capture under way, which
    the first wave of concurrent calls all wait for instead of each capturing its own.
    """

    model: models.Model
    model_name: str
    settings: ModelSettings
    templates: dict[tuple[str, str], RequestTemplate | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    capturing: dict[tuple[str, str], asyncio.Task[RequestTemplate | None]] = field(
        default_factory=dict, compare=False, repr=False
    )
    price: Price | None = None  # of the model's tokens; None: not known (tokens counted, no cost)


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


def _agent(request: CompiledRequest) -> Any:
    """LLMJudge(include_input=True, include_expected_output=True) always uses this agent; a case
    without ground truth simply has no <ExpectedOutput> section."""
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


# LLMJudge's system prompt asks for JSON text and for no reasoning process in the reason; each
# style's request says instead how that style answers (replaced word for word).
_JSON_ANSWER = (
    "You respond with a JSON object with this structure: {reason: string, pass: boolean, score: number}"
)
_NO_REASONING = "Do not include your reasoning process, self-corrections, or re-checking in the reason. "
_TOOL_ANSWER = (
    "You answer through the verdict tool of this request, whose arguments have this structure: "
    "{reason: string, pass: boolean, score: number}"
)
_COT_ANSWER = (
    "You answer as the OUTPUT section of the rubric says: your reasoning first, then a JSON object "
    "with this structure: {reason: string, pass: boolean, score: number}"
)
_COT_REASON = "Your reasoning goes in the <reasoning> block before the JSON object, not in the reason. "


def one_voice(system_prompt: str, style: str, tool_output: bool) -> str:
    """LLMJudge's system prompt as sent for ``style``: nothing in it contradicts how that style
    answers (the verdict tool, JSON text, or reasoning before the JSON)."""
    if style != "no_reasoning":
        return system_prompt.replace(_JSON_ANSWER, _COT_ANSWER).replace(_NO_REASONING, _COT_REASON)
    return system_prompt.replace(_JSON_ANSWER, _TOOL_ANSWER) if tool_output else system_prompt


class _OneVoiceModel(WrapperModel):
    """Sends LLMJudge's system prompt rewritten by ``one_voice`` for the request's style."""

    def __init__(self, wrapped: models.Model, style: str) -> None:
        super().__init__(wrapped)
        self.style = style

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        _, resolved = self.wrapped.prepare_request(model_settings, model_request_parameters)
        tool = resolved.output_mode == "tool"
        rewritten = [_rewrite(m, self.style, tool) for m in messages]
        return await self.wrapped.request(rewritten, model_settings, model_request_parameters)


def _rewrite(message: ModelMessage, style: str, tool: bool) -> ModelMessage:
    if not isinstance(message, ModelRequest):
        return message
    parts = [
        replace(p, content=one_voice(p.content, style, tool)) if isinstance(p, SystemPromptPart) else p
        for p in message.parts
    ]
    return replace(message, parts=parts)


@dataclass(frozen=True)
class RequestTemplate:
    """The first request LLMJudge's agent sends for one configuration, agent and instructions.

    The agent builds the same request for every case but for the user prompt, at about 4 ms of
    CPU per case (its graph, and the output schema rebuilt on each run). Captured once, the
    request is reused with each case's prompt and sent through the same model's ``request``:
    identical messages, settings and parameters, at a twentieth of the cost.
    """

    request: ModelRequest
    settings: ModelSettings | None
    params: ModelRequestParameters
    accepts_text: bool  # the model answers in text (native or prompted output), not a tool call
    schemas: tuple[str, ...] = ()  # the output schemas sent (a tool's, or the native output's), as JSON

    def messages(self, prompt: str | Sequence[Any]) -> list[ModelMessage]:
        parts = [UserPromptPart(prompt) if isinstance(p, UserPromptPart) else p for p in self.request.parts]
        request = replace(
            self.request,
            parts=parts,
            timestamp=datetime.now(UTC),
            run_id=_new_id(),
            conversation_id=_new_id(),
        )
        return [request]


_IDS = random.Random()


def _new_id() -> str:
    """A random (version 4) UUID like the agent's run ids, without ``uuid4``'s system call: on the
    scheduler's thread every system call hands the GIL to the main thread and waits to get it back."""
    return str(uuid.UUID(int=_IDS.getrandbits(128), version=4))


async def capture_template(
    request: CompiledRequest, model: models.Model, settings: ModelSettings | None
) -> RequestTemplate | None:
    """The request LLMJudge's agent would send to ``model`` for ``request``; None if not reusable."""
    try:
        await _agent(request).run(
            user_prompt(request),
            model=_OneVoiceModel(_CaptureModel(model), request.prompt_style),
            model_settings=settings,
            output_type=JudgeVerdict,
            instructions=request.instructions or None,
            retries=OUTPUT_RETRIES,
        )
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
    return (str(_agent(request).name), request.instructions)


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
    response = await config.model.request(messages, template.settings, template.params)
    chars = len(sent_text(messages, template.schemas))
    usage = priced_usage(config.price, [response.usage], request_chars=chars)
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
        return _verdict(answer), usage
    if response.state != "complete" or any(isinstance(p, ToolCallPart) for p in response.parts):
        # An invalid or extra tool call, a paused response: the agent takes the conversation from
        # here exactly as it would have (validation feedback, bounded retries, resumption).
        return await _run_agent(request, config, [*messages, response], request_chars=chars)
    # A text answer where the verdict tool call was due: the agent would read JSON text as the
    # verdict, but a judge that ignores the output tool is not answering the schema it was given.
    raise JudgeFailure(
        "invalid-output", "the judge answered in text instead of the verdict tool call", True, usage=usage
    )


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

    cause: Exception | None = None
    with capture_run_messages() as sent:
        try:
            result = await _agent(request).run(
                user_prompt(request),
                model=_OneVoiceModel(config.model, request.prompt_style),
                model_settings=config.settings,
                output_type=str,
                instructions=request.instructions or None,
            )
        except Exception as exc:
            cause = exc
    if cause is not None:  # (raised out here: the context manager cannot set a frozen traceback)
        raise _billed(classify(cause), config, sent) from cause
    messages = result.all_messages()
    usage = _run_usage(config, messages, result.usage.requests, len(sent_text(messages[:1], [])))
    finish = getattr(result.response, "finish_reason", None)
    parsed = parse_verdict(result.output, finish_reason=finish)
    if parsed.verdict is None:
        error = parsed.error
        kind = error.type if error else "format_error"
        # A reply cut off at the token limit will be cut off again: only unreadable ones retry.
        message = error.message if error else "no verdict in the answer"
        raise JudgeFailure(kind, message, kind != "truncation", usage=usage)
    verdict = replace(parsed.verdict, format=parsed.format or "")
    return verdict, usage


async def _run_agent(
    request: CompiledRequest, config: JudgeConfig, history: list[ModelMessage], request_chars: int = 0
) -> tuple[Verdict, Usage]:
    """The agent's run, from the start or (``history``) from the first request and its response."""
    cause: Exception | None = None
    with capture_run_messages() as sent:
        try:
            result = await _agent(request).run(
                None if history else user_prompt(request),
                message_history=history or None,
                model=_OneVoiceModel(config.model, request.prompt_style),
                model_settings=config.settings,
                output_type=JudgeVerdict,
                instructions=request.instructions or None,
                retries=OUTPUT_RETRIES,
            )
        except Exception as exc:
            cause = exc
    if cause is not None:  # (raised out here: the context manager cannot set a frozen traceback)
        raise _billed(classify(cause), config, sent) from cause
    # the history's response (sent before this run) counts: every response in the messages is one
    requests = result.usage.requests + (1 if history else 0)
    return _verdict(result.output), _run_usage(config, result.all_messages(), requests, request_chars)


def _responses(messages: Sequence[ModelMessage]) -> list[Any]:
    return [m.usage for m in messages if isinstance(m, ModelResponse)]


def _run_usage(config: JudgeConfig, messages: Sequence[ModelMessage], requests: int, chars: int) -> Usage:
    """The usage of an agent run's responses, each priced on its own."""
    return priced_usage(config.price, _responses(messages), requests, chars)


def _billed(failure: JudgeFailure, config: JudgeConfig, sent: Sequence[ModelMessage]) -> JudgeFailure:
    """``failure`` carrying the usage of the responses the run had before it failed: they are
    billed too."""
    responses = _responses(sent)
    if failure.usage is not None or not responses:
        return failure
    return replace(failure, usage=priced_usage(config.price, responses))


def _verdict(out: JudgeVerdict) -> Verdict:
    return Verdict(out.pass_, out.reason, out.score, out.confidence, out.uncertain)


def _refused(exc: BaseException) -> tuple[bool, str]:
    """Whether ``exc`` (or an exception it was raised from) is a refused connection, and the URL
    of the request it was for, if any exception in the chain carries one."""
    refused, url = False, ""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        refused = refused or isinstance(current, ConnectionRefusedError) or "refused" in str(current).lower()
        try:  # httpx raises RuntimeError for an error without its request
            request = getattr(current, "_request", None) or getattr(current, "request", None)
        except RuntimeError:
            request = None
        if not url and request is not None and getattr(request, "url", None) is not None:
            url = str(request.url)
        current = current.__cause__ or current.__context__
    return refused, url


def _unreadable(exc: BaseException) -> UnreadableResponse | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, UnreadableResponse):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


ERROR_TEXT_LIMIT = 200


def _error_text(body: object) -> str:
    """The message text of an HTTP error body, on one line and at most 200 characters: the
    ``message`` of an OpenAI-style ``{"error": {"message": …}}`` body, else the body as text."""
    found: object = body
    for _ in range(3):  # {"error": {"message": …}}, {"message": …} or {"error": "…"}
        if isinstance(found, dict):
            found = found.get("message", found.get("error", found.get("detail", found)))
        else:
            break
    text = found if isinstance(found, str) else json.dumps(found, default=str)
    text = " ".join(text.split())
    return text if len(text) <= ERROR_TEXT_LIMIT else text[: ERROR_TEXT_LIMIT - 1] + "…"


def classify(exc: BaseException) -> JudgeFailure:
    """Map a judge-call exception to a ``JudgeFailure`` saying whether a retry can help."""
    if isinstance(exc, JudgeFailure):
        return exc
    if (unreadable := _unreadable(exc)) is not None:  # over the response cap, maybe wrapped by the SDK
        return unreadable.failure
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(exc, ModelHTTPError):
        status = exc.status_code
        transient = status in {408, 409, 425, 429} or status >= 500
        kind = "rate-limited" if status == 429 else f"http-{status}"
        hint = {401: " (check the API key)", 403: " (access denied)", 400: " (bad request)"}.get(status, "")
        _, url = _refused(exc)
        where = url or exc.model_name
        return JudgeFailure(
            kind, f"HTTP {status} from {where}{hint}: {_error_text(exc.body)}", transient, retry_after
        )
    if isinstance(exc, ModelRateLimitError):
        return JudgeFailure("rate-limited", str(exc), True, retry_after)
    if isinstance(exc, ModelRequestRejectedError):
        return JudgeFailure("rejected", str(exc), False)
    if isinstance(exc, ModelConnectionError | ModelServerError | ModelUnavailableError):
        refused, url = _refused(exc)
        if refused:  # nothing listens there: retrying cannot help
            return JudgeFailure("connection-refused", f"connection refused by {url or 'the judge server'}")
        where = f" ({url})" if url else ""
        return JudgeFailure("transport", f"{exc}{where}", True, retry_after)
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


def _snapshot_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    args = {"reason": "snapshot", "pass": True}
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
    return ModelResponse(parts=[TextPart(json.dumps(args))])


_SNAPSHOT_MODEL = FunctionModel(_snapshot_answer, model_name="snapshot")
_SNAPSHOT_TEMPLATES: dict[tuple[str, str], tuple[RequestTemplate, list[ToolDefinition]] | None] = {}


T = TypeVar("T")


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, also when this thread already runs an event loop (a browser-testing plugin
    or an async test runner in the same pytest session): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def render_messages(request: CompiledRequest) -> str:
    """The exact messages and output schema the judge model is sent, as readable text."""
    messages, tools = _sent(request)
    return _format_request(messages, _schema_lines(tools))


def request_text(request: CompiledRequest) -> str:
    """The text the judge is sent for ``request`` (``sent_text``): what the estimate and a
    budget's projection count tokens of, as each call records its own length."""
    messages, tools = _sent(request)
    return sent_text(messages, [json.dumps(tool.parameters_json_schema) for tool in tools])


def output_schemas(params: ModelRequestParameters) -> tuple[str, ...]:
    """The output schemas a request sends, as JSON: each output tool's, or the native output's
    (the provider counts them as input tokens)."""
    schemas = [tool.parameters_json_schema for tool in params.output_tools]
    if params.output_mode == "native" and params.output_object is not None:
        schemas.append(params.output_object.json_schema)
    return tuple(json.dumps(schema) for schema in schemas)


def sent_text(messages: Sequence[ModelMessage], schemas: Sequence[str]) -> str:
    """The text of a judge request: the first request's instructions and parts, and its output
    schemas (``output_schemas``). Its length over the input tokens a call reports is the model's
    characters per token (the verdict cache keeps both)."""
    texts: list[str] = []
    for message in messages[:1]:
        if isinstance(message, ModelRequest):
            if message.instructions:
                texts.append(message.instructions)
            for part in message.parts:
                content = getattr(part, "content", "")
                texts.append(content if isinstance(content, str) else json.dumps(content, default=str))
    return "\n".join([*texts, *schemas])


def _sent(request: CompiledRequest) -> tuple[list[ModelMessage], list[ToolDefinition]]:
    """The messages and output tools the judge model is sent for ``request``."""
    if request.prompt_style != "no_reasoning":
        return _through_agent(request)  # text answers: no output schema
    key = _template_key(request)
    if key not in _SNAPSHOT_TEMPLATES:
        template = _run(capture_template(request, _SNAPSHOT_MODEL, None))
        if template is None:
            _SNAPSHOT_TEMPLATES[key] = None
        else:
            _, params = _SNAPSHOT_MODEL.prepare_request(template.settings, template.params)
            _SNAPSHOT_TEMPLATES[key] = (template, params.output_tools)
    found = _SNAPSHOT_TEMPLATES[key]
    if found is None:
        return _through_agent(request)
    template, tools = found
    return template.messages(user_prompt(request)), tools


def _through_agent(request: CompiledRequest) -> tuple[list[ModelMessage], list[ToolDefinition]]:
    captured: dict[str, Any] = {}

    def capture(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        captured["messages"] = messages
        captured["info"] = info
        return _snapshot_answer(messages, info)

    model = FunctionModel(capture, model_name="snapshot")
    prompt = user_prompt(request)
    _run(
        _agent(request).run(
            prompt,
            model=_OneVoiceModel(model, request.prompt_style),
            output_type=JudgeVerdict if request.prompt_style == "no_reasoning" else str,
            instructions=request.instructions or None,
        )
    )
    return captured["messages"], captured["info"].output_tools


def _schema_lines(output_tools: list[ToolDefinition]) -> list[str]:
    lines: list[str] = []
    for tool in output_tools:
        schema = json.dumps(tool.parameters_json_schema, indent=2, sort_keys=True)
        lines += [f"=== output schema ({tool.name}) ===", schema]
    return lines


def _format_request(messages: list[ModelMessage], schema: list[str]) -> str:
    lines: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest) and message.instructions:
            lines += ["=== instructions ===", message.instructions.strip()]
        for part in message.parts:
            kind = getattr(part, "part_kind", type(part).__name__)
            content = getattr(part, "content", "")
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            lines += [f"=== {kind} ===", text.strip()]
    return "\n".join([*lines, *schema]) + "\n"
