"""Retries and limits, and the judge call itself (fake models, no network)."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.profiles import ModelProfile

from pytest_llmjudge.compile.request import CompiledRequest
from pytest_llmjudge.execution.retries import RetryPolicy, judge_with_retries
from pytest_llmjudge.judging.llmjudge import (
    OUTPUT_RETRIES,
    JudgeConfig,
    JudgeVerdict,
    _agent,
    judge_once,
    user_prompt,
)
from pytest_llmjudge.judging.one_voice import OneVoiceModel
from pytest_llmjudge.judging.verdict import JudgeFailure, Usage, Verdict

REQUEST = CompiledRequest(
    "B1",
    "c1",
    "Be strict.",
    "Pass if the output matches.",
    '{"in": 1}',
    '{"gt": 2}',
    '{"out": 2}',
    "no_reasoning",
)
VERDICT = Verdict(True, "the output matches")


def scripted(answers: list[Any]) -> tuple[Any, list[float], list[float]]:
    """A judge call answering from ``answers`` in turn, and the delays slept and back-offs asked."""
    slept: list[float] = []
    backed_off: list[float] = []
    answers = list(answers)

    async def call(request: CompiledRequest) -> tuple[Verdict, Usage]:
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if answer == "hang":
            await asyncio.sleep(5)
        return VERDICT, Usage(1, 10, 2)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    def run(policy: RetryPolicy) -> Any:
        return asyncio.run(
            judge_with_retries(
                REQUEST, call, policy, "fake:judge", sleep, random.Random(7), back_off=backed_off.append
            )
        )

    return run, slept, backed_off


def test_429_waits_as_long_as_retry_after_says_and_holds_other_calls() -> None:
    run, slept, backed_off = scripted([JudgeFailure("rate-limited", "slow down", True, 2.5), "ok"])
    outcome = run(RetryPolicy(attempts=3))
    assert (outcome.verdict, outcome.attempts) == (VERDICT, 2)
    assert slept == [2.5] and backed_off == [2.5]


def test_a_retry_after_past_the_cap_ends_the_case_instead_of_stalling_the_run() -> None:
    run, slept, backed_off = scripted([JudgeFailure("rate-limited", "slow down", True, 3600), "ok"])
    outcome = run(RetryPolicy(attempts=2, max_delay=30))
    assert outcome.failure is not None and outcome.attempts == 1
    assert "Retry-After 3600 s exceeds the 60 s cap" in outcome.failure.message
    assert slept == [] and backed_off == []  # no other call is held for an hour


def test_a_retry_after_within_the_cap_holds_other_calls_and_waits_at_most_max_delay() -> None:
    run, slept, backed_off = scripted([JudgeFailure("rate-limited", "slow down", True, 45), "ok"])
    assert run(RetryPolicy(attempts=2, max_delay=30)).verdict == VERDICT
    assert slept == [30] and backed_off == [45]


@pytest.mark.parametrize("value", [float("nan"), -5.0, float("inf")])
def test_a_nonsense_retry_after_backs_off_normally(value: float) -> None:
    run, slept, backed_off = scripted([JudgeFailure("rate-limited", "slow down", True, value), "ok"])
    assert run(RetryPolicy(attempts=2, base_delay=1.0)).verdict == VERDICT
    assert backed_off == [] and len(slept) == 1 and 0.5 <= slept[0] <= 1.0


def test_a_retry_after_holds_only_the_server_that_sent_it() -> None:
    from pytest_llmjudge.execution.scheduler import Progress, Slots

    async def main() -> tuple[float, float]:
        slots = Slots(4, None, Progress())
        slots.back_off(30, "openai@http://a/v1")
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.wait_for(slots.pace("openai@http://b/v1"), 1)  # another server: no wait
        other = loop.time() - start
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(slots.pace("openai@http://a/v1"), 0.2)
        return other, loop.time() - start

    other, _ = asyncio.run(main())
    assert other < 0.1


def test_5xx_retries_with_exponential_backoff_and_jitter() -> None:
    server_error = JudgeFailure("http-500", "HTTP 500 from fake", True)
    run, slept, _ = scripted([server_error, server_error, server_error, "ok"])
    outcome = run(RetryPolicy(attempts=4, base_delay=1.0))
    assert (outcome.verdict, outcome.attempts) == (VERDICT, 4)
    for attempt, delay in enumerate(slept, start=1):
        ceiling = 1.0 * 2 ** (attempt - 1)
        assert ceiling / 2 <= delay <= ceiling
    assert len(set(slept)) == 3


def test_a_call_past_its_timeout_is_retried_then_ends_as_a_timeout() -> None:
    run, slept, _ = scripted(["hang", "hang"])
    outcome = run(RetryPolicy(attempts=2, timeout=0.01))
    assert outcome.verdict is None and outcome.failure is not None
    assert (outcome.failure.kind, outcome.attempts, len(slept)) == ("timeout", 2, 1)
    assert "no answer within 0.01 s" in outcome.failure.message


def test_output_that_does_not_validate_is_retried() -> None:
    run, _, _ = scripted([JudgeFailure("invalid-output", "judge output did not validate", True), "ok"])
    assert run(RetryPolicy(attempts=2)).attempts == 2


def test_401_fails_fast_with_a_clear_message() -> None:
    unauthorized = JudgeFailure("http-401", "HTTP 401 from openai (check the API key): bad key")
    run, slept, _ = scripted([unauthorized, "ok"])
    outcome = run(RetryPolicy(attempts=4))
    assert outcome.failure == unauthorized and outcome.attempts == 1 and slept == []


def test_attempts_are_bounded_and_the_last_cause_is_kept() -> None:
    causes = [JudgeFailure("http-503", f"unavailable #{n}", True) for n in range(1, 5)]
    run, slept, _ = scripted(causes)
    outcome = run(RetryPolicy(attempts=3))
    assert outcome.failure == causes[2] and outcome.attempts == 3 and len(slept) == 2


# -- the judge call: LLMJudge's exact request, sent straight to the model ---------------------


def answer(args: dict[str, Any]) -> Any:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return respond


def judge(function: Any, **settings: Any) -> tuple[Verdict, Usage]:
    config = JudgeConfig(FunctionModel(function, model_name="fake"), "function:fake", settings)  # type: ignore[arg-type]
    return asyncio.run(judge_once(REQUEST, config))


def failure_of(function: Any) -> JudgeFailure:
    with pytest.raises(JudgeFailure) as raised:
        judge(function)
    return raised.value


def test_provider_errors_are_classified() -> None:
    def raising(error: Exception) -> Any:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            raise error

        return respond

    rate_limited = failure_of(raising(ModelHTTPError(429, "fake", {"error": "slow down"}, retry_after=1.5)))
    assert (rate_limited.kind, rate_limited.transient, rate_limited.retry_after) == (
        "rate-limited",
        True,
        1.5,
    )
    server = failure_of(raising(ModelHTTPError(500, "fake", {"error": "boom"})))
    assert (server.kind, server.transient) == ("http-500", True)
    unauthorized = failure_of(raising(ModelHTTPError(401, "fake", {"error": "invalid key"})))
    assert (unauthorized.kind, unauthorized.transient) == ("http-401", False)
    assert "check the API key" in unauthorized.message
    bad_request = failure_of(raising(ModelHTTPError(400, "fake", {"error": "bad"})))
    assert (bad_request.kind, bad_request.transient) == ("http-400", False)
    reset = failure_of(raising(ConnectionResetError("connection reset by peer")))
    assert (reset.kind, reset.transient) == ("transport", True)


def test_a_valid_answer_is_one_request() -> None:
    verdict, usage = judge(answer({"pass": False, "reason": "the dose differs", "confidence": "high"}))
    assert verdict == Verdict(False, "the dose differs", None, "high", False)
    assert usage.requests == 1 and usage.input_tokens > 0


def test_invalid_output_gets_the_agents_own_retries_with_feedback() -> None:
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"pass": "maybe"})])
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, {"pass": True, "reason": "fixed"})]
        )

    verdict, usage = judge(respond)
    assert verdict.reason == "fixed" and usage.requests == 2
    feedback = seen[1][-1]
    assert isinstance(feedback, ModelRequest)
    assert any(isinstance(p, RetryPromptPart | ToolReturnPart) for p in feedback.parts)


def test_arguments_that_never_validate_end_as_a_transient_invalid_output() -> None:
    calls: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"pass": "perhaps"})])

    failure = failure_of(respond)
    assert (failure.kind, failure.transient) == ("invalid-output", True)
    assert len(calls) == OUTPUT_RETRIES + 1  # as many requests as LLMJudge's agent makes


def test_a_text_answer_where_a_tool_call_was_due_is_invalid_output_worth_retrying() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(json.dumps({"pass": True, "reason": "JSON, but as text"}))])

    with pytest.raises(JudgeFailure) as raised:
        judge(respond)
    assert raised.value.kind == "invalid-output" and raised.value.transient


def test_a_model_answering_in_text_is_read_directly() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert info.allow_text_output and not info.output_tools
        return ModelResponse(parts=[TextPart(json.dumps({"pass": False, "reason": "native output"}))])

    profile = ModelProfile(supports_json_schema_output=True, default_structured_output_mode="native")
    model = FunctionModel(respond, model_name="fake", profile=profile)
    verdict, usage = asyncio.run(judge_once(REQUEST, JudgeConfig(model, "function:fake", {})))
    assert (verdict.passed, verdict.reason, usage.requests) == (False, "native output", 1)


def _recorder() -> tuple[FunctionModel, list[dict[str, Any]]]:
    """A model that records what it receives (messages, output tools, settings)."""
    seen: list[dict[str, Any]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(
            {
                "messages": [
                    (
                        type(m).__name__,
                        getattr(m, "instructions", None),
                        [(p.part_kind, p.content) for p in m.parts],
                    )
                    for m in messages
                ],
                "tools": [
                    (t.name, json.dumps(t.parameters_json_schema, sort_keys=True)) for t in info.output_tools
                ],
                "settings": info.model_settings,
                "text_allowed": info.allow_text_output,
            }
        )
        return answer({"pass": True, "reason": "same"})(messages, info)

    return FunctionModel(respond, model_name="fake", settings={"max_tokens": 99}), seen


@pytest.mark.parametrize("expected_output", ['{"gt": 2}', None])
@pytest.mark.parametrize("instructions", ["Be strict.", ""])
def test_the_model_receives_exactly_what_llmjudges_agent_sends(
    expected_output: str | None, instructions: str
) -> None:
    settings: Any = {"temperature": 0.0, "timeout": 30.0}
    direct, sent = _recorder()
    config = JudgeConfig(direct, "function:fake", settings)
    reference, expected = _recorder()
    for number in range(3):  # captured once for the configuration, then reused for each case
        request = CompiledRequest(
            "B1",
            f"c{number}",
            instructions,
            "Pass if it matches.",
            f'{{"in": {number}}}',
            expected_output,
            f'{{"out": {number}}}',
            "no_reasoning",
        )
        asyncio.run(judge_once(request, config))
        asyncio.run(
            _agent().run(
                user_prompt(request),
                # LLMJudge's agent, with its system prompt in the request's one voice (answer
                # through the verdict tool): what the judge is sent, and what snapshots show
                model=OneVoiceModel(reference, request.prompt_style),
                model_settings=settings,
                output_type=JudgeVerdict,
                instructions=request.instructions or None,
            )
        )
    assert len(config.templates) == 1
    assert sent == expected


def test_concurrent_first_calls_capture_the_request_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """32 calls start together on a fresh configuration: one agent run builds the request they share."""
    from pytest_llmjudge.judging import llmjudge as judge

    captures: list[str] = []
    original = judge.capture_template

    async def counting(*args: Any) -> Any:
        captures.append("run")
        await asyncio.sleep(0.01)  # the agent's run yields to the loop, as a real one does
        return await original(*args)

    monkeypatch.setattr(judge, "capture_template", counting)
    model, sent = _recorder()
    config = JudgeConfig(model, "function:fake", {})

    async def first_wave() -> list[Any]:
        requests = [
            CompiledRequest("B1", f"c{n}", "", "R", f'{{"in": {n}}}', None, "{}", "no_reasoning")
            for n in range(32)
        ]
        return await asyncio.gather(*(judge_once(r, config) for r in requests))

    results = asyncio.run(first_wave())
    assert len(captures) == 1
    assert [verdict.passed for verdict, _ in results] == [True] * 32
    assert len(sent) == 32 and not config.capturing


def test_a_failed_capture_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_llmjudge.judging import llmjudge as judge

    original = judge.capture_template
    calls: list[str] = []

    async def flaky(*args: Any) -> Any:
        calls.append("run")
        if len(calls) == 1:
            raise ConnectionError("reset while preparing")
        return await original(*args)

    monkeypatch.setattr(judge, "capture_template", flaky)
    model, _ = _recorder()
    config = JudgeConfig(model, "function:fake", {})
    with pytest.raises(JudgeFailure) as failed:
        asyncio.run(judge_once(REQUEST, config))
    assert failed.value.kind == "transport"
    verdict, _ = asyncio.run(judge_once(REQUEST, config))
    assert verdict.passed and len(calls) == 2
