"""In-process unit tests of ``pytest_llmjudge.judging``: the judge call (single and pairwise), its
billing (every response priced, failed runs included), the request as the judge sees it (the
snapshots' text and the characters counted), the system prompt's one voice, deterministic checks,
and the verdict records. Judges are pydantic-ai ``FunctionModel``s: nothing reaches a network."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pydantic_ai.models
import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
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
from pydantic_ai.output import OutputObjectDefinition
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RequestUsage
from pydantic_evals.evaluators import EvaluationReason

from pytest_llmjudge.compile.pairwise import PairwiseRequest, pairwise_system_prompt
from pytest_llmjudge.compile.request import CompiledRequest
from pytest_llmjudge.cost.pricing import Price
from pytest_llmjudge.judging import pairwise_judge, rendering
from pytest_llmjudge.judging.agent_call import billed, billed_run, responses, stand_in
from pytest_llmjudge.judging.checks import checked_outcome, run_checks
from pytest_llmjudge.judging.llmjudge import JudgeVerdict, judge_once, user_prompt
from pytest_llmjudge.judging.one_voice import OneVoiceModel, one_voice
from pytest_llmjudge.judging.pairwise_judge import (
    judge_pair_once,
    output_tools,
    read_pairwise_text,
    render_pair,
)
from pytest_llmjudge.judging.pairwise_verdict import PairwiseVerdict, majority_answer
from pytest_llmjudge.judging.rendering import render_messages, request_text, run_sync
from pytest_llmjudge.judging.sent_text import output_schemas, sent_text
from pytest_llmjudge.judging.verdict import JudgeFailure, Outcome, Usage, Verdict
from pytest_llmjudge.judging.verdict_text import ParsedVerdict, ParseError, parse_verdict
from pytest_llmjudge.models.answered import Answered
from pytest_llmjudge.models.config import JudgeConfig
from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Case, CaseSpec, CheckSpec

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False

# 1 USD per million input tokens, 2 per million output tokens: 100 in + 20 out cost 0.00014.
PRICE = Price("judge", None, Decimal(1), None, Decimal(2), "--llmjudge-price")
USED = RequestUsage(input_tokens=100, output_tokens=20)
USED_COST = Decimal("0.00014")
SNAPSHOT = Answered("judge-2024-01-01", "fp_1")

REQUEST = CompiledRequest(
    "B1", "c1", "Be strict.", "Pass if it matches.", '{"in": 1}', '{"gt": 2}', '{"out": 2}', "no_reasoning"
)
COT_REQUEST = CompiledRequest(
    "B1", "c1", "", "Pass if it matches.", '{"in": 1}', None, '{"out": 2}', "short_cot"
)

# LLMJudge's system prompt as each style sends it: {answer} and {reason_rule} are the sentences
# the request's prompt style rewrites.
SYSTEM = (
    "You are grading output according to a user-specified rubric. If the statement in the rubric is "
    "true for the provided input, expected output, and output, then the output passes the test. "
    "{answer}\n\nExamples:\n\n<Input>What color is the sky?</Input>\n<Output>Cerulean</Output>\n"
    "<ExpectedOutput>Blue</ExpectedOutput>\n<Rubric>The output is consistent with the expected output "
    "but doesn't have to match exactly</Rubric>\n"
    '{{"reason": "\'Cerulean\' is a shade of blue", "pass": true, "score": 1.0}}\n\n'
    "<Input>How many legs does a spider have?</Input>\n<Output>Six</Output>\n"
    "<ExpectedOutput>8</ExpectedOutput>\n<Rubric>The output is factually consistent with the expected "
    'output</Rubric>\n{{"reason": "Spiders have 8 legs", "pass": false, "score": 0.0}}\n\n'
    'The "reason" field must be a concise 1-2 sentence justification. {reason_rule}State only the '
    "final justification."
)
JSON_ANSWER = (
    "You respond with a JSON object with this structure: {reason: string, pass: boolean, score: number}"
)
TOOL_ANSWER = (
    "You answer through the verdict tool of this request, whose arguments have this structure: "
    "{reason: string, pass: boolean, score: number}"
)
COT_ANSWER = (
    "You answer as the OUTPUT section of the rubric says: your reasoning first, then a JSON object "
    "with this structure: {reason: string, pass: boolean, score: number}"
)
NO_REASONING = "Do not include your reasoning process, self-corrections, or re-checking in the reason. "
COT_REASON = "Your reasoning goes in the <reasoning> block before the JSON object, not in the reason. "
TOOL_SYSTEM = SYSTEM.format(answer=TOOL_ANSWER, reason_rule=NO_REASONING)
COT_SYSTEM = SYSTEM.format(answer=COT_ANSWER, reason_rule=COT_REASON)
USER_PROMPT = (
    '<Input>\n{"in": 1}\n</Input>\n<Output>\n{"out": 2}\n</Output>\n'
    '<ExpectedOutput>\n{"gt": 2}\n</ExpectedOutput>\n<Rubric>\nPass if it matches.\n</Rubric>'
)
COT_USER_PROMPT = (
    '<Input>\n{"in": 1}\n</Input>\n<Output>\n{"out": 2}\n</Output>\n<Rubric>\nPass if it matches.\n</Rubric>'
)

# The verdict tool's schema, as sent (property order kept).
VERDICT_SCHEMA: dict[str, Any] = {
    "properties": {
        "reason": {
            "description": "50-200 characters citing the key evidence for the verdict.",
            "type": "string",
        },
        "pass": {"type": "boolean"},
        "score": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
        "confidence": {
            "anyOf": [{"enum": ["high", "medium", "low"], "type": "string"}, {"type": "null"}],
            "default": None,
        },
        "uncertain": {
            "default": False,
            "description": "True when the case is ambiguous; implies pass = false.",
            "type": "boolean",
        },
    },
    "required": ["reason", "pass"],
    "title": "JudgeVerdict",
    "type": "object",
}
PAIRWISE_SCHEMA: dict[str, Any] = {
    "properties": {
        "winner": {
            "description": '"A" or "B": the output that satisfies the rubric better; "tie": neither.',
            "enum": ["A", "B", "tie"],
            "type": "string",
        },
        "reason": {
            "description": "50-200 characters comparing the key evidence in both outputs.",
            "type": "string",
        },
    },
    "required": ["winner", "reason"],
    "title": "PairwiseAnswer",
    "type": "object",
}


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test captures its own snapshot templates, pairwise agents and tools."""
    monkeypatch.setattr(rendering, "_SNAPSHOT_TEMPLATES", {})
    monkeypatch.setattr(pairwise_judge, "_AGENTS", {})
    monkeypatch.setattr(pairwise_judge, "_TOOLS", {})
    rendering._indented.cache_clear()


class Judge(FunctionModel):
    """A FunctionModel whose responses name ``SNAPSHOT`` as the model that answered (as a provider
    names its resolved snapshot); ``unreported``: its responses report no usage."""

    def __init__(self, function: Any, unreported: bool = False, **kwargs: Any) -> None:
        super().__init__(function, model_name="judge", **kwargs)
        self.unreported = unreported

    async def request(self, *args: Any, **kwargs: Any) -> ModelResponse:
        response = await super().request(*args, **kwargs)
        response.model_name = SNAPSHOT.model
        response.provider_details = {"system_fingerprint": SNAPSHOT.fingerprint}
        if self.unreported:
            response.usage = RequestUsage()
        return response


def config(function: Any, settings: ModelSettings | None = None, **kwargs: Any) -> JudgeConfig:
    return JudgeConfig(Judge(function, **kwargs), "function:judge", settings or {}, price=PRICE)


Answer = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def tool_call(args: Any, usage: RequestUsage = USED) -> Answer:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)], usage=usage)

    return respond


def text(answer: str, finish_reason: Any = None) -> Answer:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(answer)], usage=USED, finish_reason=finish_reason)

    return respond


def judged(request: CompiledRequest, function: Any, **kwargs: Any) -> tuple[Verdict, Usage]:
    return asyncio.run(judge_once(request, config(function, **kwargs)))


def failure(request: CompiledRequest, function: Any, **kwargs: Any) -> JudgeFailure:
    with pytest.raises(JudgeFailure) as raised:
        judged(request, function, **kwargs)
    return raised.value


# -- verdict.py ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passed", "uncertain", "effective"), [(True, False, True), (True, True, False), (False, False, False)]
)
def test_an_uncertain_verdict_never_passes(passed: bool, uncertain: bool, effective: bool) -> None:
    assert Verdict(passed, "r", uncertain=uncertain).effective_pass is effective


def test_verdict_json_keeps_every_field() -> None:
    verdict = Verdict(False, "dose differs", 0.25, "low", True, "yaml", answered=SNAPSHOT)
    data = {
        "pass": False,
        "reason": "dose differs",
        "score": 0.25,
        "confidence": "low",
        "uncertain": True,
        "format": "yaml",
    }
    assert verdict.to_json() == data
    assert Verdict.from_json(data) == verdict


def test_verdict_json_defaults_and_integer_scores() -> None:
    read = Verdict.from_json({"pass": True, "reason": "ok", "score": 1})
    assert read == Verdict(True, "ok", 1.0, None, False, "")
    assert isinstance(read.score, float)


@pytest.mark.parametrize("confidence", ["high", "medium", "low", None])
def test_every_confidence_level_and_no_score_read_back(confidence: Any) -> None:
    data = {"pass": True, "reason": "ok", "score": None, "confidence": confidence}
    assert Verdict.from_json(data) == Verdict(True, "ok", None, confidence, False, "")


def test_a_damaged_pairwise_verdict_says_what_it_is_in_the_cache_warning() -> None:
    """The cache reads a stored verdict as a single one, then as a pairwise one: what the second
    says is the damage its warning quotes."""
    for data, message in (
        ([], "a pairwise verdict is a JSON object"),
        ({"winner": "a", "reason": "r"}, '\'winner\' must be "A", "B" or "tie"'),
        ({"winner": "tie", "reason": None}, "'reason' must be a string"),
    ):
        with pytest.raises(TypeError) as raised:
            PairwiseVerdict.from_json(data)
        assert str(raised.value) == message
    assert PairwiseVerdict.from_json({"winner": "tie", "reason": "alike"}) == PairwiseVerdict("tie", "alike")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "a verdict is a JSON object"),
        ({"pass": "false", "reason": "r"}, "'pass' and 'uncertain' must be true or false"),
        ({"pass": True, "reason": "r", "uncertain": 1}, "'pass' and 'uncertain' must be true or false"),
        ({"pass": True, "reason": 3}, "'reason' and 'format' must be strings"),
        ({"pass": True, "reason": "r", "format": None}, "'reason' and 'format' must be strings"),
        ({"pass": True, "reason": "r", "score": True}, "'score' must be a number or null"),
        ({"pass": True, "reason": "r", "score": "1"}, "'score' must be a number or null"),
        (
            {"pass": True, "reason": "r", "confidence": "sure"},
            "'confidence' must be high, medium, low or null",
        ),
    ],
)
def test_a_damaged_verdict_is_never_read(data: Any, message: str) -> None:
    with pytest.raises(TypeError, match=f"^{message}$"):
        Verdict.from_json(data)


def test_who_answered_is_not_part_of_what_a_verdict_says() -> None:
    assert Verdict(True, "r", answered=SNAPSHOT) == Verdict(True, "r", answered=Answered("other"))


# -- pairwise_verdict.py: one order's answer from repeated samples ----------------------------


def test_the_majority_winner_keeps_its_first_reason() -> None:
    answers = [PairwiseVerdict("B", "b1"), PairwiseVerdict("A", "a1"), PairwiseVerdict("B", "b2")]
    assert majority_answer(answers) == PairwiseVerdict("B", "b1")


@pytest.mark.parametrize(
    ("winners", "reason"),
    [
        (["A", "B"], "no majority among 2 samples (1 A, 1 B, 0 tie)"),
        (["A", "A", "B", "tie"], "no majority among 4 samples (2 A, 1 B, 1 tie)"),
    ],
)
def test_no_majority_is_a_tie_that_counts_the_samples(winners: list[str], reason: str) -> None:
    answers = [PairwiseVerdict(w, f"r{i}") for i, w in enumerate(winners)]  # type: ignore[arg-type]
    assert majority_answer(answers) == PairwiseVerdict("tie", reason)


def test_a_single_sample_is_its_own_majority() -> None:
    assert majority_answer([PairwiseVerdict("tie", "same")]) == PairwiseVerdict("tie", "same")


def test_no_samples_cannot_be_reduced() -> None:
    with pytest.raises(ValueError, match=r"^no answers to reduce$"):
        majority_answer([])


# -- sent_text.py -------------------------------------------------------------------------------


def test_sent_text_is_the_first_requests_instructions_parts_and_schemas() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("system"), UserPromptPart(["look", "here"])], instructions="be strict"
        ),
        ModelResponse(parts=[TextPart("answer")]),
        ModelRequest(parts=[UserPromptPart("a later request")]),
    ]
    assert (
        sent_text(messages, ['{"a": 1}', '{"b": 2}'])
        == 'be strict\nsystem\n["look", "here"]\n{"a": 1}\n{"b": 2}'
    )


def test_sent_text_without_instructions_or_a_request() -> None:
    assert sent_text([ModelRequest(parts=[UserPromptPart("only")])], []) == "only"
    assert (
        sent_text([ModelResponse(parts=[TextPart("x")]), ModelRequest(parts=[UserPromptPart("y")])], ["{}"])
        == "{}"
    )


def test_output_schemas_are_the_tools_and_the_native_output() -> None:
    tools = [ToolDefinition(name="first", parameters_json_schema={"a": 1}), ToolDefinition(name="second")]
    native = OutputObjectDefinition(json_schema={"n": True})
    params = ModelRequestParameters(output_mode="native", output_object=native, output_tools=tools)
    assert output_schemas(params) == ('{"a": 1}', '{"type": "object", "properties": {}}', '{"n": true}')
    # a prompted output's schema is in the prompt text already
    assert output_schemas(replace(params, output_mode="prompted", output_tools=[])) == ()
    assert output_schemas(ModelRequestParameters(output_mode="native")) == ()
    assert output_schemas(replace(params, output_mode="tool")) == (
        '{"a": 1}',
        '{"type": "object", "properties": {}}',
    )


# -- one_voice.py -------------------------------------------------------------------------------

PROMPT = f"Grade it. {JSON_ANSWER}\nRules. {NO_REASONING}End."


@pytest.mark.parametrize(
    ("style", "tool", "expected"),
    [
        ("no_reasoning", True, f"Grade it. {TOOL_ANSWER}\nRules. {NO_REASONING}End."),
        ("no_reasoning", False, PROMPT),
        ("short_cot", True, f"Grade it. {COT_ANSWER}\nRules. {COT_REASON}End."),
        ("long_cot", False, f"Grade it. {COT_ANSWER}\nRules. {COT_REASON}End."),
    ],
)
def test_the_system_prompt_says_how_each_style_answers(style: str, tool: bool, expected: str) -> None:
    assert one_voice(PROMPT, style, tool) == expected


@pytest.mark.parametrize(
    ("style", "mode", "system"),
    [
        ("no_reasoning", "tool", f"Grade it. {TOOL_ANSWER}\nRules. {NO_REASONING}End."),
        ("no_reasoning", "native", PROMPT),
        ("no_reasoning", "prompted", PROMPT),
        ("short_cot", "text", f"Grade it. {COT_ANSWER}\nRules. {COT_REASON}End."),
    ],
)
def test_the_one_voice_model_rewrites_only_system_prompts(style: str, mode: str, system: str) -> None:
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart("done")])

    profile = ModelProfile(supports_json_schema_output=True, supports_tools=True)
    model = OneVoiceModel(FunctionModel(respond, profile=profile), style)
    tools = [ToolDefinition(name="final_result")] if mode == "tool" else []
    native = OutputObjectDefinition(json_schema={}) if mode in {"native", "prompted"} else None
    params = ModelRequestParameters(output_mode=mode, output_tools=tools, output_object=native)  # type: ignore[arg-type]
    sent: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart(PROMPT), UserPromptPart(PROMPT)]),
        ModelResponse(parts=[TextPart(PROMPT)]),
    ]
    answer = asyncio.run(model.request(sent, None, params))
    assert answer.parts == [TextPart("done")]
    request, response = seen[0]
    assert isinstance(request, ModelRequest)
    assert [getattr(p, "content", None) for p in request.parts] == [system, PROMPT]
    assert response == sent[1]


# -- agent_call.py ------------------------------------------------------------------------------


def test_the_stand_in_answers_through_the_output_tool_or_as_json_text() -> None:
    seen: list[tuple[list[ModelMessage], AgentInfo]] = []
    model = stand_in({"reason": "snapshot", "pass": True}, lambda m, i: seen.append((m, i)))
    agent = Agent(system_prompt="grade")
    tooled = agent.run_sync("hello", model=model, output_type=JudgeVerdict)
    assert tooled.output == JudgeVerdict(reason="snapshot", pass_=True)
    assert tooled.response.model_name == "snapshot"
    messages, info = seen[0]
    assert [(p.part_kind, getattr(p, "content", None)) for p in messages[0].parts] == [
        ("system-prompt", "grade"),
        ("user-prompt", "hello"),
    ]
    assert [t.name for t in info.output_tools] == ["final_result"]
    assert (
        agent.run_sync("hello", model=stand_in({"pass": False}), output_type=str).output == '{"pass": false}'
    )
    unseen = agent.run_sync("hi", model=stand_in({"reason": "r", "pass": False}), output_type=JudgeVerdict)
    assert unseen.output == JudgeVerdict(reason="r", pass_=False)
    call = unseen.response.parts[0]
    assert isinstance(call, ToolCallPart) and call.args == {"reason": "r", "pass": False}


def test_a_run_bills_every_response_and_the_history_sent_before() -> None:
    calls: list[Any] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(info.model_settings)
        args = {"pass": "maybe"} if len(calls) == 1 else {"pass": True, "reason": "fixed"}
        used = USED if len(calls) == 1 else RequestUsage(input_tokens=200, output_tokens=30)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)], usage=used)

    judge = config(respond, settings={"max_tokens": 7})
    ran = asyncio.run(
        billed_run(Agent(), "hello", judge, judge.model, len, earlier_requests=3, output_type=JudgeVerdict)
    )
    assert ran.output == JudgeVerdict(reason="fixed", pass_=True)
    assert calls == [{"max_tokens": 7}] * 2  # the configuration's settings, on every request
    # 100 + 2 * 20 and 200 + 2 * 30 millionths; 3 earlier requests and 2 of the run's
    # ``chars`` counts the run's messages: request, answer, retry, answer, and the tool's return
    assert ran.usage == Usage(5, 300, 50, 0, Decimal("0.00040"), 5)
    assert ran.response is ran.messages[3]


def test_a_response_without_usage_is_estimated_from_the_characters_sent() -> None:
    judge = config(text("twelve chars"), unreported=True)
    ran = asyncio.run(billed_run(Agent(), "hello", judge, judge.model, lambda _: 41, output_type=str))
    # 41 characters sent: 11 tokens; 12 answered: 3 tokens (4 characters a token, rounded up)
    assert ran.usage == Usage(1, 11, 3, 0, Decimal("0.000017"), 41, estimated=1)
    assert ran.output == "twelve chars"


def test_a_failed_run_is_billed_for_the_responses_it_got() -> None:
    calls: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        if len(calls) == 1:
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"pass": 1})], usage=USED)
        raise ModelHTTPError(500, "judge", {"error": "boom"})

    judge = config(respond)
    with pytest.raises(JudgeFailure) as raised:
        asyncio.run(billed_run(Agent(), "hello", judge, judge.model, len, output_type=JudgeVerdict))
    assert raised.value == JudgeFailure(
        "http-500", "HTTP 500 from judge: boom", True, usage=Usage(1, 100, 20, 0, USED_COST)
    )
    assert isinstance(raised.value.__cause__, ModelHTTPError)


def test_a_run_failing_before_any_response_bills_nothing() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionResetError("reset by peer")

    judge = config(respond)
    with pytest.raises(JudgeFailure) as raised:
        asyncio.run(billed_run(Agent(), "hello", judge, judge.model, len, output_type=str))
    assert raised.value == JudgeFailure("transport", "ConnectionResetError: reset by peer", True)


@pytest.mark.parametrize(
    ("own", "used", "billed_usage"),
    [
        (None, Usage(2, 50, 5), Usage(2, 50, 5)),
        (Usage(1, 7, 1), Usage(2, 50, 5), Usage(1, 7, 1)),  # the failure's own usage is kept
        (None, Usage(0, 50, 5), None),  # no response: nothing to bill
    ],
)
def test_a_failure_carries_what_its_call_used(
    own: Usage | None, used: Usage, billed_usage: Usage | None
) -> None:
    assert billed(JudgeFailure("http-500", "boom", True, usage=own), used) == JudgeFailure(
        "http-500", "boom", True, usage=billed_usage
    )


def test_responses_are_the_model_responses_among_the_messages() -> None:
    first, second = ModelResponse(parts=[TextPart("a")]), ModelResponse(parts=[TextPart("b")])
    assert responses([ModelRequest(parts=[UserPromptPart("q")]), first, second]) == [first, second]


# -- llmjudge.py: the single judge call ----------------------------------------------------------


def test_the_user_prompt_is_llmjudges() -> None:
    assert user_prompt(REQUEST) == USER_PROMPT
    assert user_prompt(COT_REQUEST) == COT_USER_PROMPT  # no ground truth: no <ExpectedOutput>


def test_a_verdict_tool_call_is_one_billed_request_naming_who_answered() -> None:
    args = {"pass": False, "reason": "dose", "score": 0.5, "confidence": "low", "uncertain": True}
    settings: list[Any] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        settings.append(info.model_settings)
        return tool_call(args)(messages, info)

    verdict, usage = asyncio.run(judge_once(REQUEST, config(respond, settings={"temperature": 0.25})))
    assert settings == [{"temperature": 0.25}]  # the configuration's settings are sent
    assert verdict == Verdict(False, "dose", 0.5, "low", True, "")
    assert verdict.answered == SNAPSHOT
    # the call records the length of the request text the estimate counts (rendering.request_text)
    assert usage == Usage(1, 100, 20, 0, USED_COST, len(request_text(REQUEST)))


def test_tool_arguments_sent_as_a_json_string_are_read() -> None:
    verdict, usage = judged(REQUEST, tool_call('{"pass": true, "reason": "as text"}'))
    assert (verdict, usage.requests) == (Verdict(True, "as text"), 1)


@pytest.mark.parametrize(
    ("respond", "message"),
    [
        (
            lambda m, info: ModelResponse(
                parts=[
                    ToolCallPart(info.output_tools[0].name, {"pass": v, "reason": "r"}) for v in (True, False)
                ],
                usage=USED,
            ),
            "the judge gave 2 verdicts (tool calls); exactly one is expected",
        ),
        (
            text('{"pass": true, "reason": "as text"}'),
            "the judge answered in text instead of the verdict tool call",
        ),
    ],
    ids=["two verdict calls", "text instead of the tool"],
)
def test_a_malformed_answer_is_billed_invalid_output(respond: Any, message: str) -> None:
    usage = Usage(1, 100, 20, 0, USED_COST, len(request_text(REQUEST)))
    assert failure(REQUEST, respond) == JudgeFailure("invalid-output", message, True, usage=usage)


def test_invalid_arguments_continue_the_conversation_billing_both_responses() -> None:
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        if len(seen) == 1:
            return tool_call({"pass": "maybe", "reason": "r"})(messages, info)
        return tool_call({"pass": True, "reason": "fixed"}, RequestUsage(input_tokens=200, output_tokens=30))(
            messages, info
        )

    verdict, usage = judged(REQUEST, respond)
    assert verdict == Verdict(True, "fixed")
    assert usage == Usage(2, 300, 50, 0, Decimal("0.00040"), len(request_text(REQUEST)))
    assert len(seen) == 2 and seen[1][:2] == seen[0] + [seen[1][1]]  # the first exchange went on
    assert seen[1][1].parts[0].args == {"pass": "maybe", "reason": "r"}  # type: ignore[union-attr]
    # the retry is asked with the prompt file's instructions, as the first request was
    assert [getattr(m, "instructions", None) for m in seen[1]] == ["Be strict.", None, "Be strict."]


def test_an_invalid_answer_is_asked_again_twice_then_fails() -> None:
    """``OUTPUT_RETRIES`` (2): two invalid answers and a third valid one is a verdict; three invalid
    answers are an invalid-output failure after three billed requests."""

    def answers(invalid: int) -> Answer:
        seen: list[int] = []

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.append(1)
            wrong = len(seen) <= invalid
            return tool_call({"pass": "maybe", "reason": "r"} if wrong else {"pass": True, "reason": "ok"})(
                messages, info
            )

        return respond

    verdict, usage = judged(REQUEST, answers(2))
    assert (verdict.passed, verdict.reason, usage.requests) == (True, "ok", 3)
    raised = failure(REQUEST, answers(3))
    assert raised.kind == "invalid-output" and raised.usage is not None and raised.usage.requests == 3


def test_a_call_to_an_unknown_tool_goes_back_to_the_agent() -> None:
    seen: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(1)
        if len(seen) == 1:
            # a verdict's arguments, but not through the verdict tool
            return ModelResponse(parts=[ToolCallPart("lookup", {"pass": True, "reason": "r"})], usage=USED)
        return tool_call({"pass": False, "reason": "second"})(messages, info)

    verdict, usage = judged(REQUEST, respond)
    assert (verdict, usage.requests, usage.input_tokens) == (Verdict(False, "second"), 2, 200)


def test_a_verdict_beside_another_tool_call_is_the_one_verdict() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        verdict = ToolCallPart(info.output_tools[0].name, {"pass": True, "reason": "v"})
        return ModelResponse(parts=[verdict, ToolCallPart("lookup", {"q": 1})], usage=USED)

    verdict, usage = judged(REQUEST, respond)
    assert verdict == Verdict(True, "v")
    assert usage == Usage(1, 100, 20, 0, USED_COST, len(request_text(REQUEST)))


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_a_model_with_structured_text_output_answers_in_text(mode: Any) -> None:
    profile = ModelProfile(supports_json_schema_output=True, default_structured_output_mode=mode)
    verdict, usage = judged(REQUEST, text('{"pass": false, "reason": "native", "score": 0}'), profile=profile)
    assert verdict == Verdict(False, "native", 0.0)
    assert (usage.requests, usage.input_tokens, usage.output_tokens, usage.cost) == (1, 100, 20, USED_COST)


@pytest.mark.parametrize("mode", ["native", "prompted"])
@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (
            "not json",
            "the judge's JSON answer is not a verdict: Invalid JSON: expected ident at line 1 column 2",
        ),
        ('{"reason": "r"}', "the judge's JSON answer is not a verdict: Field required at pass"),
    ],
)
def test_structured_text_that_is_no_verdict_says_why_and_is_retried(mode: Any, answer: str, why: str) -> None:
    profile = ModelProfile(supports_json_schema_output=True, default_structured_output_mode=mode)
    raised = failure(REQUEST, text(answer), profile=profile)
    assert replace(raised, usage=None) == JudgeFailure("invalid-output", why, True)
    assert raised.usage is not None and raised.usage.requests == 1  # billed, as every attempt
    assert (raised.usage.input_tokens, raised.usage.output_tokens) == (USED.input_tokens, USED.output_tokens)


def test_the_request_is_captured_once_per_agent_and_instructions() -> None:
    judge = config(tool_call({"pass": True, "reason": "ok"}))
    asyncio.run(judge_once(REQUEST, judge))
    first = judge.templates["judge_input_output_expected", "Be strict."]
    for instructions in ("", "Be strict."):
        asyncio.run(judge_once(replace(REQUEST, instructions=instructions), judge))
    assert judge.templates["judge_input_output_expected", "Be strict."] is first  # reused, not captured again
    assert list(judge.templates) == [
        ("judge_input_output_expected", "Be strict."),
        ("judge_input_output_expected", ""),
    ]
    template = judge.templates["judge_input_output_expected", "Be strict."]
    assert template is not None and not judge.capturing
    assert (template.accepts_text, template.schemas) == (False, (json.dumps(VERDICT_SCHEMA),))
    assert template.request.instructions == "Be strict."


@pytest.mark.parametrize("style", ["short_cot", "long_cot"])
def test_a_chain_of_thought_verdict_is_read_from_text(style: str) -> None:
    answer = '<reasoning>It matches.</reasoning>\n{"pass": true, "reason": "matches", "score": 1}'
    sent: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(messages)
        return text(answer)(messages, info)

    verdict, usage = judged(replace(COT_REQUEST, prompt_style=style, instructions="Think first."), respond)
    assert [getattr(m, "instructions", None) for m in sent[0]] == ["Think first."]
    assert verdict == Verdict(True, "matches", 1.0, format="json")
    assert verdict.answered == SNAPSHOT
    assert replace(usage, request_chars=0) == Usage(1, 100, 20, 0, USED_COST)


@pytest.mark.parametrize("style", ["short_cot", "long_cot"])
def test_a_chain_of_thought_call_counts_the_request_as_sent_and_estimated(style: str) -> None:
    request = replace(COT_REQUEST, prompt_style=style)
    answer = text('<reasoning>ok</reasoning>\n{"pass": true, "reason": "x"}')
    assert judged(request, answer)[1].request_chars == len(request_text(request))


@pytest.mark.parametrize(
    ("answer", "finish", "kind", "message", "transient"),
    [
        (
            "I cannot tell",
            None,
            "format_error",
            "no verdict found: no JSON, YAML, XML, 'pass:' field or PASS/FAIL word",
            True,
        ),
        (
            '{"pass": "maybe", "reason": "r"}',
            None,
            "invalid_value",
            "'pass' must be true or false, got 'maybe'",
            True,
        ),
        (
            "<think>still thinking",
            None,
            "truncation",
            "the answer ended inside an unclosed reasoning block",
            False,
        ),
        (
            "The answer is",
            "length",
            "truncation",
            "the answer was cut off at the token limit (no verdict found: "
            "no JSON, YAML, XML, 'pass:' field or PASS/FAIL word)",
            False,
        ),
    ],
)
def test_an_unreadable_text_verdict_is_a_billed_failure(
    answer: str, finish: str | None, kind: str, message: str, transient: bool
) -> None:
    raised = failure(COT_REQUEST, text(answer, finish))
    assert replace(raised, usage=None) == JudgeFailure(kind, message, transient)
    assert raised.usage is not None and replace(raised.usage, request_chars=0) == Usage(
        1, 100, 20, 0, USED_COST
    )


def test_a_provider_error_is_classified() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelHTTPError(401, "judge", {"error": "invalid key"})

    assert failure(REQUEST, respond) == JudgeFailure(
        "http-401", "HTTP 401 from judge (check the API key): invalid key"
    )


# -- rendering.py: the request as the snapshots show it ------------------------------------------


def _schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True)


def test_render_messages_shows_instructions_system_user_prompt_and_schema() -> None:
    assert render_messages(REQUEST) == (
        f"=== instructions ===\nBe strict.\n=== system-prompt ===\n{TOOL_SYSTEM}\n"
        f"=== user-prompt ===\n{USER_PROMPT}\n"
        f"=== output schema (final_result) ===\n{_schema_text(VERDICT_SCHEMA)}\n"
    )


def test_a_chain_of_thought_request_shows_its_instructions() -> None:
    assert render_messages(replace(COT_REQUEST, instructions=" Think first. ")) == (
        f"=== instructions ===\nThink first.\n=== system-prompt ===\n{COT_SYSTEM}\n"
        f"=== user-prompt ===\n{COT_USER_PROMPT}\n"
    )


@pytest.mark.parametrize("style", ["short_cot", "long_cot"])
def test_a_chain_of_thought_request_has_no_schema_and_no_empty_instructions(style: str) -> None:
    assert render_messages(replace(COT_REQUEST, prompt_style=style)) == (
        f"=== system-prompt ===\n{COT_SYSTEM}\n=== user-prompt ===\n{COT_USER_PROMPT}\n"
    )


def test_request_text_is_what_a_call_sends() -> None:
    assert (
        request_text(REQUEST) == f"Be strict.\n\n{TOOL_SYSTEM}\n{USER_PROMPT}\n{json.dumps(VERDICT_SCHEMA)}"
    )
    assert request_text(COT_REQUEST) == f"\n{COT_SYSTEM}\n{COT_USER_PROMPT}"


def test_cases_of_one_benchmark_share_the_captured_request() -> None:
    other = replace(REQUEST, case_id="c2", output='{"out": 3}')
    render_messages(REQUEST)
    captured = rendering._SNAPSHOT_TEMPLATES["judge_input_output_expected", "Be strict."]
    assert render_messages(other) == render_messages(REQUEST).replace('{"out": 2}', '{"out": 3}')
    assert list(rendering._SNAPSHOT_TEMPLATES) == [("judge_input_output_expected", "Be strict.")]
    assert rendering._SNAPSHOT_TEMPLATES["judge_input_output_expected", "Be strict."] is captured


def test_format_request_renders_each_part() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(["a", "b"])], instructions="  inst  "),
        ModelResponse(parts=[TextPart(" said ")]),
    ]
    assert rendering._format_request(messages, ["=== schema ===", "{}"]) == (
        '=== instructions ===\ninst\n=== user-prompt ===\n["a", "b"]\n'
        "=== text ===\nsaid\n=== schema ===\n{}\n"
    )


def test_run_sync_also_runs_inside_a_running_loop() -> None:
    async def answer() -> int:
        return 42

    async def outer() -> int:
        return run_sync(answer())

    assert run_sync(answer()) == 42
    assert asyncio.run(outer()) == 42


# -- checks.py: deterministic checks -------------------------------------------------------------

CASE = Case(
    CaseSpec(
        id="c1",
        source_narrative="story",
        ground_truth="Hello world",
        candidate_output="Hello world",
        inputs={"lang": "en"},
        metadata={"tier": 1},
    ),
    Location("benchmarks/B1.yaml", 3),
)
SEEN_CONTEXTS: list[Any] = []


def seen_context(ctx: Any) -> bool:
    SEEN_CONTEXTS.append(ctx)
    return True


def says_no(ctx: Any) -> tuple[bool, str]:
    return False, "too short"


def says_no_quietly(ctx: Any) -> bool:
    return False


def mixed_results(ctx: Any) -> dict[str, Any]:
    return {"long": EvaluationReason(True, "fine"), "polite": False}


def explains(ctx: Any) -> EvaluationReason:
    return EvaluationReason(value=False, reason="no greeting")


def blows_up(ctx: Any) -> bool:
    raise ValueError("broken check")


def all_fine(ctx: Any) -> dict[str, Any]:
    return {"long": EvaluationReason(True, "fine"), "polite": True}


def fine_and_why(ctx: Any) -> tuple[bool, str]:
    return True, "long enough"


def no_reason_given(ctx: Any) -> EvaluationReason:
    return EvaluationReason(value=False)


def reads_spans(ctx: Any) -> bool:
    return bool(ctx.span_tree)


NOT_CALLABLE = 3


def python(function: str) -> CheckSpec:
    return CheckSpec(type="python", function=f"{__name__}:{function}")


def test_passing_checks_say_how_many_passed() -> None:
    checks = [
        CheckSpec(type="contains", value="hello", case_sensitive=False),
        CheckSpec(type="equals", value="Hello world"),
        CheckSpec(type="equals_expected"),
        CheckSpec(type="is_instance", value="str"),
        python("seen_context"),
        python("all_fine"),
        python("fine_and_why"),
    ]
    assert run_checks(CASE, checks) == Verdict(True, "all 7 deterministic check(s) passed", 1.0)


@pytest.mark.parametrize(
    ("check", "reason"),
    [
        (
            CheckSpec(type="contains", value="hello"),
            "check 2 contains('hello') failed: "
            "Output string 'Hello world' does not contain expected string 'hello'",
        ),
        (CheckSpec(type="equals", value="x"), "check 2 equals('x') failed"),
        (
            CheckSpec(type="is_instance", value="int"),
            "check 2 is_instance('int') failed: output is of type str",
        ),
        (python("says_no"), f"check 2 {__name__}:says_no failed: too short"),
        (python("says_no_quietly"), f"check 2 {__name__}:says_no_quietly failed"),
        (python("mixed_results"), f"check 2 {__name__}:mixed_results failed"),
        (python("explains"), f"check 2 {__name__}:explains failed: no greeting"),
        (python("no_reason_given"), f"check 2 {__name__}:no_reason_given failed"),
    ],
)
def test_the_first_failing_check_is_named(check: CheckSpec, reason: str) -> None:
    assert run_checks(CASE, [CheckSpec(type="equals_expected"), check, python("blows_up")]) == Verdict(
        False, reason, 0.0
    )


def test_equals_expected_compares_with_the_ground_truth() -> None:
    case = Case(CaseSpec(id="c2", candidate_output="Hi", ground_truth="Hello"), Location("b.yaml"))
    assert run_checks(case, [CheckSpec(type="equals_expected")]) == Verdict(
        False, "check 1 equals_expected failed", 0.0
    )


def test_a_python_check_sees_the_case() -> None:
    SEEN_CONTEXTS.clear()
    run_checks(CASE, [python("seen_context")])
    ctx = SEEN_CONTEXTS[0]
    assert (ctx.name, ctx.inputs, ctx.metadata, ctx.expected_output, ctx.output, ctx.duration) == (
        "c1",
        {"source_narrative": "story", "lang": "en"},
        {"tier": 1},
        "Hello world",
        "Hello world",
        0.0,
    )
    assert (ctx.attributes, ctx.metrics) == ({}, {})  # what a check may record: nothing yet


def test_a_python_check_reading_spans_is_told_none_were_recorded() -> None:
    outcome = checked(python("reads_spans"))
    assert outcome.failure == JudgeFailure(
        "check-error", "SpanTreeRecordingError: deterministic check: no spans recorded"
    )


def checked(*checks: CheckSpec) -> Outcome:
    benchmark = SimpleNamespace(spec=SimpleNamespace(checks=list(checks) or None))
    return checked_outcome(SimpleNamespace(case=CASE, benchmark=benchmark))


@pytest.mark.parametrize(
    ("check", "found"),
    [
        (
            CheckSpec(type="python", function="no_such_module_here:f"),
            JudgeFailure(
                "check-config",
                "python check 'no_such_module_here:f' cannot be imported: "
                "No module named 'no_such_module_here'",
            ),
        ),
        (
            python("missing"),
            JudgeFailure(
                "check-config",
                f"python check '{__name__}:missing' cannot be imported: "
                f"module '{__name__}' has no attribute 'missing'",
            ),
        ),
        (
            python("NOT_CALLABLE"),
            JudgeFailure("check-config", f"python check '{__name__}:NOT_CALLABLE' is not callable"),
        ),
        (python("blows_up"), JudgeFailure("check-error", "ValueError: broken check")),
    ],
)
def test_a_broken_check_errors_its_case(check: CheckSpec, found: JudgeFailure) -> None:
    assert checked(check) == Outcome(None, found, "checks")


def test_checked_outcome_is_the_checks_verdict() -> None:
    assert checked(CheckSpec(type="equals_expected")) == Outcome(
        Verdict(True, "all 1 deterministic check(s) passed", 1.0), None, "checks"
    )
    assert checked() == Outcome(Verdict(True, "all 0 deterministic check(s) passed", 1.0), None, "checks")


# -- pairwise_judge.py -------------------------------------------------------------------------

PAIR = PairwiseRequest(
    "B1",
    "c1",
    "Be fair.",
    pairwise_system_prompt("no_reasoning"),
    "Prefer the complete one.",
    '{"in": 1}',
    None,
    '"a"',
    '"b"',
    "candidate_first",
    "no_reasoning",
)
COT_PAIR = replace(
    PAIR, instructions="", system_prompt=pairwise_system_prompt("short_cot"), prompt_style="short_cot"
)
PAIR_USER_PROMPT = (
    '<Input>\n{"in": 1}\n</Input>\n<OutputA>\n"a"\n</OutputA>\n<OutputB>\n"b"\n</OutputB>\n'
    "<Rubric>\nPrefer the complete one.\n</Rubric>"
)


def judged_pair(request: PairwiseRequest, function: Any) -> tuple[PairwiseVerdict, Usage]:
    return asyncio.run(judge_pair_once(request, config(function)))


def test_a_pairwise_verdict_tool_call_is_one_billed_request() -> None:
    verdict, usage = judged_pair(PAIR, tool_call({"winner": "B", "reason": "b is complete"}))
    assert verdict == PairwiseVerdict("B", "b is complete")
    assert verdict.answered == SNAPSHOT
    sent = "\n".join(["Be fair.", PAIR.system_prompt, PAIR_USER_PROMPT, json.dumps(PAIRWISE_SCHEMA)])
    assert usage == Usage(1, 100, 20, 0, USED_COST, len(sent))


@pytest.mark.parametrize("style", ["short_cot", "long_cot"])
def test_a_chain_of_thought_pairwise_answer_is_read_from_text(style: str) -> None:
    answer = '<reasoning>{"winner": "A"}</reasoning> {"winner": "tie", "reason": "same"}'
    verdict, usage = judged_pair(replace(COT_PAIR, prompt_style=style), text(answer))
    assert verdict == PairwiseVerdict("tie", "same")
    assert verdict.answered == SNAPSHOT
    assert usage == Usage(
        1, 100, 20, 0, USED_COST, len("\n".join([COT_PAIR.system_prompt, PAIR_USER_PROMPT]))
    )


def test_an_invalid_pairwise_answer_is_asked_again() -> None:
    calls: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        winner = "a" if len(calls) == 1 else "A"  # only the exact strings count
        return tool_call({"winner": winner, "reason": "r"})(messages, info)

    verdict, usage = judged_pair(PAIR, respond)
    assert verdict == PairwiseVerdict("A", "r")
    assert (usage.requests, usage.input_tokens, usage.output_tokens, usage.cost) == (
        2,
        200,
        40,
        2 * USED_COST,
    )


def test_an_invalid_pairwise_answer_is_asked_again_twice_then_fails() -> None:
    def answers(invalid: int) -> Answer:
        calls: list[int] = []

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            calls.append(1)
            return tool_call({"winner": "a" if len(calls) <= invalid else "B", "reason": "r"})(messages, info)

        return respond

    verdict, usage = judged_pair(PAIR, answers(2))
    assert (verdict, usage.requests) == (PairwiseVerdict("B", "r"), 3)
    with pytest.raises(JudgeFailure) as raised:
        judged_pair(PAIR, answers(3))
    assert raised.value.kind == "invalid-output"
    assert raised.value.usage is not None and raised.value.usage.requests == 3


def test_an_unreadable_pairwise_answer_is_billed() -> None:
    with pytest.raises(JudgeFailure) as raised:
        judged_pair(COT_PAIR, text("no idea"))
    chars = len("\n".join([COT_PAIR.system_prompt, PAIR_USER_PROMPT]))
    assert raised.value == JudgeFailure(
        "format_error",
        "no JSON object with a winner in the answer",
        True,
        usage=Usage(1, 100, 20, 0, USED_COST, chars),
    )


def test_a_pairwise_provider_error_is_classified() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelHTTPError(503, "judge", {"error": "busy"})

    with pytest.raises(JudgeFailure) as raised:
        judged_pair(PAIR, respond)
    assert raised.value == JudgeFailure("http-503", "HTTP 503 from judge: busy", True)


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        (
            '{"winner": "A", "reason": "first"} then {"winner": "B", "reason": "last"}',
            PairwiseVerdict("B", "last"),
        ),
        ('{"winner": "A", "reason": "kept"} {"note": 1} {broken', PairwiseVerdict("A", "kept")),
        (
            '<think>{"winner": "B", "reason": "draft"}</think>{"winner": "tie", "reason": "t"}',
            PairwiseVerdict("tie", "t"),
        ),
        (
            '{"winner": "A", "reason": "final"}\n<think>{"winner": "B", "reason": "second thoughts"}',
            PairwiseVerdict("A", "final"),
        ),
        ('{{"winner": "B", "reason": "doubled brace"}', PairwiseVerdict("B", "doubled brace")),
        ('note {oops} {"winner": "A", "reason": "r"} and {broken', PairwiseVerdict("A", "r")),
        ('{"a": 1} {"winner": "B", "reason": "mid"} {"b": {"c": 2}}', PairwiseVerdict("B", "mid")),
    ],
)
def test_a_pairwise_text_answer_is_its_last_object_naming_a_winner(
    answer: str, verdict: PairwiseVerdict
) -> None:
    assert read_pairwise_text(answer) == verdict


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        (None, JudgeFailure("format_error", "no JSON object with a winner in the answer", True)),
        (
            '{"reason": "no winner"}',
            JudgeFailure("format_error", "no JSON object with a winner in the answer", True),
        ),
        (
            '{"winner": "C", "reason": "r"}',
            JudgeFailure("invalid_value", '\'winner\' must be "A", "B" or "tie"', True),
        ),
        ('{"winner": "A"}', JudgeFailure("invalid_value", "'reason' must be a string", True)),
    ],
)
def test_an_unreadable_pairwise_text_is_a_retried_failure(answer: str | None, found: JudgeFailure) -> None:
    with pytest.raises(JudgeFailure) as raised:
        read_pairwise_text(answer)
    assert raised.value == found


def test_the_pairwise_verdict_tool_is_sent_only_to_structured_styles() -> None:
    assert output_tools(PAIR) == [("final_result", PAIRWISE_SCHEMA)]
    assert output_tools(PAIR) is output_tools(replace(PAIR, case_id="c2"))  # found once per style
    assert output_tools(COT_PAIR) == []


def test_render_pair_shows_the_pairwise_request_and_its_schema() -> None:
    assert render_pair(PAIR) == (
        f"=== instructions ===\nBe fair.\n=== system-prompt ===\n{PAIR.system_prompt}\n"
        f"=== user-prompt ===\n{PAIR_USER_PROMPT}\n"
        f"=== output schema (final_result) ===\n{_schema_text(PAIRWISE_SCHEMA)}\n"
    )


def test_one_pairwise_agent_per_system_prompt() -> None:
    agent = pairwise_judge._agent(PAIR)
    assert pairwise_judge._agent(replace(PAIR, order="baseline_first")) is agent
    assert pairwise_judge._agent(COT_PAIR) is not agent
    assert agent.name == "pairwise_judge"


# -- verdict_text.py: what test_verdict_text.py leaves open ------------------------------------


@pytest.mark.parametrize(
    ("answer", "parsed"),
    [
        ("```yml\npass: true\nreason: short\n```", ParsedVerdict(Verdict(True, "short"), "yaml")),
        (
            '```JSON\n{"pass": true, "reason": "upper"}\n```',
            ParsedVerdict(Verdict(True, "upper"), "fenced_json"),
        ),
        (
            '{"pass": true, "reason": "r", "confidence": " Medium "}',
            ParsedVerdict(Verdict(True, "r", confidence="medium"), "json"),
        ),
        ('```jsonc\n{"pass": false, "reason": "c"}\n```', ParsedVerdict(Verdict(False, "c"), "fenced_json")),
        (
            '```python\nx = 1\n```\n{"pass": true, "reason": "after code"}',
            ParsedVerdict(Verdict(True, "after code"), "json"),
        ),
        (
            '{"result": "passed", "rationale": "r", "score": "", "confidence": ""}',
            ParsedVerdict(Verdict(True, "r"), "json"),
        ),
        (
            "<decision>fail</decision><justification>j</justification>",
            ParsedVerdict(Verdict(False, "j"), "xml"),
        ),
        (
            '{"pass": 0.0, "reason": "zero", "uncertain": false}',
            ParsedVerdict(Verdict(False, "zero"), "json"),
        ),
        ("Verdict: passes", ParsedVerdict(Verdict(True, "Verdict: passes"), "words")),
        (
            '{"pass": true, "reason": "r", "score": 1',
            ParsedVerdict(
                None, None, ParseError("truncation", "the JSON verdict is cut off: Expecting ',' delimiter")
            ),
        ),
        (
            '{"pass": true, "reason": "r", "confidence": "HIGHEST"}',
            ParsedVerdict(
                None,
                None,
                ParseError("invalid_value", "'confidence' must be high, medium or low, got 'HIGHEST'"),
            ),
        ),
    ],
)
def test_more_text_verdicts(answer: str, parsed: ParsedVerdict) -> None:
    assert parse_verdict(answer) == parsed
