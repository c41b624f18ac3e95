"""Run-level guards: one pytest run per behaviour a user relies on, each failing when the product
line that provides it breaks (a benchmark's judge settings, pacing, review file, uncertain
verdicts, hybrid checks, back-off, API keys, gate rounding, timeouts, option errors, counts)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pydantic_ai.models
import pytest
from conftest import Suite
from fake_openai import FakeOpenAI, serve

# A judge driven by the candidate output: "FAIL" fails, "UNSURE" passes but is uncertain, "BROKEN"
# raises, "RATE-LIMITED" is refused once with a 429 and Retry-After of 1 s, "SLEEP s" sleeps.
# Every call is logged with what the model received: settings, output tools, prompt, start time.
GUARD_CONFTEST = """
import asyncio
import json
import re
import time
from pathlib import Path

import pydantic_ai.models
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
HERE = Path(__file__).parent
SEEN = {}


async def judge(messages, info):
    texts = [getattr(p, "content", None) for m in messages for p in m.parts]
    prompt = "".join(t for t in texts if isinstance(t, str))
    output = re.search(r"<Output>\\n(.*?)\\n</Output>", prompt, re.S).group(1)
    SEEN[output] = SEEN.get(output, 0) + 1
    call = {
        "output": output,
        "at": time.monotonic(),
        "settings": dict(info.model_settings or {}),
        "tools": [tool.name for tool in info.output_tools],
        "prompt": prompt,
    }
    with (HERE / "calls.jsonl").open("a") as log:
        log.write(json.dumps(call) + "\\n")
    if "RATE-LIMITED" in output and SEEN[output] == 1:
        raise ModelHTTPError(429, "guard", retry_after=1.0)
    if "BROKEN" in output:
        raise RuntimeError("the judge is down")
    found = re.search(r"SLEEP ([0-9.]+)", output)
    if found:
        await asyncio.sleep(float(found.group(1)))
    verdict = {"pass": "FAIL" not in output, "reason": "judged", "uncertain": "UNSURE" in output}
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, verdict)])
    return ModelResponse(parts=[TextPart("<reasoning>read it</reasoning>\\n" + json.dumps(verdict))])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="guard")
"""

HEAD = "concept: The output is fine.\ninclusion_criteria: Apply always. Flag if it is not.\n"


def benchmark(code: str, outputs: list[str], extra: str = "", threshold: str = "1.0") -> str:
    cases = "".join(f"  - id: c{n}\n    candidate_output: {json.dumps(o)}\n" for n, o in enumerate(outputs))
    return f"code: {code}\nthreshold: {threshold}\n{HEAD}{extra}cases:\n{cases}"


@pytest.fixture
def guarded(pytester: pytest.Pytester) -> Suite:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(GUARD_CONFTEST)
    return Suite(pytester)


def calls(suite: Suite) -> list[dict[str, Any]]:
    log = suite.root / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def calls_for(suite: Suite, text: str) -> list[dict[str, Any]]:
    return [call for call in calls(suite) if text in call["output"]]


def judge_run(suite: Suite, *args: str) -> pytest.RunResult:
    return suite.run("--llmjudge-cache=off", *args)


# -- a benchmark's own judge settings ---------------------------------------------------------------


def test_a_benchmarks_judge_temperature_is_sent_to_the_model(guarded: Suite) -> None:
    guarded.benchmark("B-WARM", benchmark("B-WARM", ["warm"], "judge: {temperature: 0.7}\n"))
    guarded.benchmark("B-RUN", benchmark("B-RUN", ["run"]))
    judge_run(guarded, "--llmjudge-temperature=0.2").assert_outcomes(passed=4)
    assert [c["settings"].get("temperature") for c in calls_for(guarded, "warm")] == [0.7]
    assert [c["settings"].get("temperature") for c in calls_for(guarded, "run")] == [0.2]


def test_a_benchmarks_prompt_style_decides_what_the_judge_is_asked_for(guarded: Suite) -> None:
    guarded.benchmark("B-COT", benchmark("B-COT", ["reasoned"], "judge: {prompt_style: short_cot}\n"))
    guarded.benchmark("B-RUN", benchmark("B-RUN", ["plain"]))
    judge_run(guarded).assert_outcomes(passed=4)
    (reasoned,) = calls_for(guarded, "reasoned")
    (plain,) = calls_for(guarded, "plain")
    assert reasoned["tools"] == [] and "<reasoning>" in reasoned["prompt"]  # answers in text
    assert plain["tools"] != [] and "<reasoning>" not in plain["prompt"]  # the run's no_reasoning


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1, which the run may call (no other model is
    reachable)."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    for name in ("OPENAI_API_KEY", "LLMJUDGE_API_KEY", "LLMJUDGE_MODEL", "LLMJUDGE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with serve() as fake:
        yield fake


def junit_models(suite: Suite) -> dict[str, str]:
    tree = ET.parse(suite.root / "junit.xml")
    return {
        case.get("name", ""): prop.get("value", "")
        for case in tree.iter("testcase")
        for prop in case.iter("property")
        if prop.get("name") == "llmjudge_model"
    }


def test_a_benchmarks_base_url_is_where_its_judge_is_called(
    bare_suite: Suite, openai_server: FakeOpenAI
) -> None:
    url = openai_server.url
    own = f"judge: {{model: 'openai:fake-judge', base_url: '{url}/v1'}}\n"
    bare_suite.benchmark("B-URL", benchmark("B-URL", ["served"], own))
    judge_run(bare_suite, "--junitxml=junit.xml").assert_outcomes(passed=2)
    sent = [(r.path, r.body["model"]) for r in openai_server.completions]
    assert sent == [("/v1/chat/completions", "fake-judge")]
    assert junit_models(bare_suite)["c0"] == f"openai:fake-judge@{url}/v1"


@pytest.mark.parametrize(
    ("environment", "sent"),
    [
        ({"OPENAI_API_KEY": "sk-openai"}, "Bearer sk-openai"),
        ({"OPENAI_API_KEY": "sk-openai", "LLMJUDGE_API_KEY": "sk-judge"}, "Bearer sk-judge"),
    ],
    ids=["OPENAI_API_KEY", "LLMJUDGE_API_KEY-first"],
)
def test_the_api_key_reaches_an_openai_compatible_server(
    bare_suite: Suite,
    openai_server: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    environment: dict[str, str],
    sent: str,
) -> None:
    url = openai_server.url
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    bare_suite.benchmark("B-KEY", benchmark("B-KEY", ["keyed"]))
    result = judge_run(bare_suite, "--llmjudge-model=openai:fake-judge", f"--llmjudge-base-url={url}")
    result.assert_outcomes(passed=2)
    assert [r.auth for r in openai_server.completions] == [sent]


# -- pacing and back-off ------------------------------------------------------------------------------


def starts(suite: Suite) -> list[float]:
    return sorted(call["at"] for call in calls(suite))


def test_rpm_spaces_the_judge_calls_of_a_run(guarded: Suite) -> None:
    guarded.benchmark("B-RPM", benchmark("B-RPM", ["one", "two", "three"]))
    judge_run(guarded, "--llmjudge-rpm=120").assert_outcomes(passed=4)
    began = starts(guarded)
    assert len(began) == 3
    assert began[-1] - began[0] >= 0.95  # 120 per minute: one start every 0.5 s


def test_a_retry_after_from_one_call_holds_the_other_calls_too(guarded: Suite) -> None:
    # A is refused (Retry-After 1 s) while B runs; C takes B's slot at 0.2 s and must wait for 1 s.
    outputs = ["A RATE-LIMITED", "B SLEEP 0.2", "C"]
    guarded.benchmark("B-429", benchmark("B-429", outputs))
    judge_run(guarded, "--llmjudge-concurrency=2").assert_outcomes(passed=4)
    first = min(starts(guarded))
    (later,) = calls_for(guarded, '"C"')
    assert later["at"] - first >= 0.9
    assert len(calls_for(guarded, "RATE-LIMITED")) == 2  # refused once, then judged


# -- verdicts, review, checks -------------------------------------------------------------------------


def test_an_uncertain_verdict_fails_its_case_and_lists_it_for_review(guarded: Suite) -> None:
    guarded.benchmark("B-UNSURE", benchmark("B-UNSURE", ["clear", "UNSURE"]))
    result = judge_run(guarded, "-rf")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "needs human review (1, listed in .llmjudge/review.json):",
            "  B-UNSURE::c1 at benchmarks/a/B-UNSURE.yaml:*",
            "FAILED benchmarks/a/B-UNSURE.yaml::B-UNSURE::c1*",
        ]
    )
    listed = json.loads((guarded.root / ".llmjudge/review.json").read_text())["cases"]
    assert [entry["nodeid"] for entry in listed] == ["benchmarks/a/B-UNSURE.yaml::B-UNSURE::c1"]


def test_the_review_file_goes_where_the_option_says(guarded: Suite) -> None:
    guarded.benchmark("B-UNSURE", benchmark("B-UNSURE", ["UNSURE"]))
    result = judge_run(guarded, "--llmjudge-review-file=reports/to-review.json")
    result.stdout.fnmatch_lines(["needs human review (1, listed in reports/to-review.json):"])
    listed = json.loads((guarded.root / "reports/to-review.json").read_text())["cases"]
    assert [entry["case"] for entry in listed] == ["c0"]
    assert not (guarded.root / ".llmjudge/review.json").exists()


def test_a_hybrid_case_whose_checks_fail_is_not_sent_to_the_judge(guarded: Suite) -> None:
    checks = "evaluator_type: hybrid\nchecks:\n  - {type: contains, value: hello}\n"
    guarded.benchmark("B-HYB", benchmark("B-HYB", ["hello there", "goodbye"], checks))
    judge_run(guarded).assert_outcomes(passed=2, failed=1)
    assert [json.loads(call["output"])["CANDIDATE_OUTPUT"] for call in calls(guarded)] == ["hello there"]


# -- gates ----------------------------------------------------------------------------------------------

RUBRIC = """\
code: R
label: Rounding
aggregation_method: WEIGHTED_AVERAGE
passing_threshold: 0.9
benchmarks: [B-LIGHT, B-HEAVY]
"""


def test_pass_rates_exactly_at_their_thresholds_pass_despite_float_rounding(guarded: Suite) -> None:
    # 9/10 in both benchmarks; weighted 0.1 and 0.2 the rubric's score is 0.8999999999999999 in floats.
    outputs = ["ok"] * 9 + ["FAIL"]
    for code, weight in (("B-LIGHT", 0.1), ("B-HEAVY", 0.2)):
        extra = f"parent_rubric: R\nweight: {weight}\n"
        guarded.benchmark(code, benchmark(code, outputs, extra, threshold="0.9"))
    guarded.write("rubrics/R.yaml", RUBRIC)
    result = judge_run(guarded)
    result.assert_outcomes(passed=20, failed=2)
    result.stdout.re_match_lines(
        [
            r"B-HEAVY\s+10\s+9\s+1\b.*\bPASS\b",
            r"B-LIGHT\s+10\s+9\s+1\b.*\bPASS\b",
            r"R\s+WEIGHTED_AVERAGE\s+0\.900\b.*\bPASS\b",
        ]
    )
    assert result.ret == pytest.ExitCode.OK


# -- timeouts -------------------------------------------------------------------------------------------


def test_a_benchmarks_judge_timeout_is_not_capped_by_the_runs(guarded: Suite) -> None:
    guarded.benchmark("B-SLOW", benchmark("B-SLOW", ["SLEEP 0.5"], "judge: {timeout: 5}\n"))
    judge_run(guarded, "--llmjudge-timeout=0.2", "--llmjudge-attempts=1").assert_outcomes(passed=2)


def test_a_benchmarks_short_judge_timeout_errors_a_slow_call(guarded: Suite) -> None:
    guarded.benchmark("B-SLOW", benchmark("B-SLOW", ["SLEEP 0.5"], "judge: {timeout: 0.2}\n"))
    result = judge_run(guarded, "--llmjudge-timeout=5", "--llmjudge-attempts=1")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*no answer within 0.2 s*"])


# -- option errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ini", "environment", "args", "message"),
    [
        ("", {}, ["--llmjudge-prompt-style=verbose"], "--llmjudge-prompt-style: 'verbose' is not one of *"),
        (
            "",
            {"LLMJUDGE_PROMPT_STYLE": "verbose"},
            [],
            "LLMJUDGE_PROMPT_STYLE (environment): 'verbose' is not one of *",
        ),
        (
            "llmjudge_prompt_style = verbose",
            {},
            [],
            "llmjudge_prompt_style (ini file): 'verbose' is not one of *",
        ),
        ("llmjudge_concurrency = 0", {}, [], "llmjudge_concurrency (ini file): must be at least 1, not 0"),
        ("", {}, ["--llmjudge-rpm=-5"], "--llmjudge-rpm: must be a positive number of requests, not -5"),
    ],
    ids=["command-line", "environment", "ini-prompt-style", "ini-concurrency", "negative-rpm"],
)
def test_an_invalid_option_value_is_one_usage_error_naming_its_source(
    guarded: Suite,
    monkeypatch: pytest.MonkeyPatch,
    ini: str,
    environment: dict[str, str],
    args: list[str],
    message: str,
) -> None:
    guarded.pytester.makeini(f"[pytest]\n{ini}\n")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    guarded.benchmark("B-OK", benchmark("B-OK", ["fine"]))
    result = guarded.run("--collect-only", *args)  # refused before anything is collected
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1, errors
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert calls(guarded) == []


# -- the summary's judge line ------------------------------------------------------------------------------


def test_failed_calls_count_as_errors_not_verdicts(guarded: Suite) -> None:
    guarded.benchmark("B-DOWN", benchmark("B-DOWN", ["BROKEN 1", "BROKEN 2", "BROKEN 3"]))
    result = judge_run(guarded)
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.re_match_lines([r"judge: 0 verdict\(s\), .*, 3 error\(s\)"])


def test_the_label_names_the_url_requests_go_to() -> None:
    """A base URL without /v1 is used as given, so the label must not claim /v1 either."""
    from pytest_llmjudge.models.models import judge_label

    assert judge_label("fake-judge", "http://host:8000/") == "openai:fake-judge@http://host:8000"
    assert judge_label("openai:fake-judge", "http://host:8000/v1") == "openai:fake-judge@http://host:8000/v1"
