"""Judging, verdicts, errors, gates, rubric aggregation, JUnit and model selection (pytester)."""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")

# The fake judge reads a directive from the candidate output: PASS, FAIL, UNCERTAIN, HTTP401,
# HTTP429, HTTP500, TIMEOUT, GARBAGE, REFUSE, RESET. Calls are appended to calls.log.
JUDGE = """
import asyncio, json, re
from pathlib import Path
from pydantic_ai import models
from pydantic_ai.exceptions import ContentFilterError, ModelHTTPError
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

models.ALLOW_MODEL_REQUESTS = False
LOG = Path(__file__).parent / "calls.log"

async def judge(messages, info):
    prompt = "".join(
        p.content for m in messages for p in m.parts if isinstance(getattr(p, "content", None), str)
    )
    words = "PASS|FAIL|UNCERTAIN|HTTP401|HTTP429|HTTP500|TIMEOUT|GARBAGE|REFUSE|RESET"
    directive = re.search(rf"<Output>\\n.*?({words})", prompt, re.S).group(1)
    with LOG.open("a") as log:
        log.write(directive + "\\n")
    if directive == "HTTP401":
        raise ModelHTTPError(401, "fake", {"error": "invalid api key"})
    if directive == "HTTP429":
        raise ModelHTTPError(429, "fake", {"error": "slow down"}, retry_after=0.01)
    if directive == "HTTP500":
        raise ModelHTTPError(500, "fake", {"error": "boom"}, retry_after=0.01)
    if directive == "TIMEOUT":
        await asyncio.sleep(5)
    if directive == "REFUSE":
        raise ContentFilterError("content filtered")
    if directive == "RESET":
        raise ConnectionResetError("connection reset by peer")
    if directive == "GARBAGE":
        return ModelResponse(parts=[TextPart("I think it is fine")])
    args = {
        "pass": directive == "PASS",
        "reason": f"judged {directive.lower()} on the evidence",
        "score": 1.0 if directive == "PASS" else 0.0,
    }
    if directive == "UNCERTAIN":
        args["uncertain"] = True
    if not info.output_tools:  # chain-of-thought styles answer in text
        if "GARBAGE" in prompt:
            return ModelResponse(parts=[TextPart("<think>hmm, hard to say")])
        reasoning = "<reasoning>\\nThe output is checked against the ground truth.\\n</reasoning>\\n"
        return ModelResponse(parts=[TextPart(reasoning + json.dumps(args))])
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="fake-judge")
"""


def bench(code: str, outcomes: list[str], **fields: object) -> str:
    """A benchmark file whose cases' candidate outputs carry the fake judge's directives."""
    head = {
        "code": code,
        "label": f"{code} label",
        "concept": "The output matches.",
        "evaluator_type": "llm_judge",
    }
    head.update(fields)
    lines = [f"{k}: {json.dumps(v)}" for k, v in head.items()]
    lines.append("inclusion_criteria: Apply when there is output. Flag if it is wrong.")
    lines.append("cases:")
    for i, outcome in enumerate(outcomes):
        lines.append(f"  - id: c{i}")
        lines.append(f"    ground_truth: expected {i}")
        lines.append(f"    candidate_output: {outcome} answer {i}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(JUDGE)
    pytester.makeini("[pytest]\nllmjudge_attempts = 2\n")
    return pytester


def write(pytester: pytest.Pytester, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("benchmarks", "-p", "no:syrupy", "-p", "no:cacheprovider", *args)


def calls(pytester: pytest.Pytester) -> list[str]:
    log = pytester.path / "calls.log"
    return log.read_text().split() if log.exists() else []


def junit(pytester: pytest.Pytester, result_path: str = "out.xml") -> dict[str, ET.Element]:
    root = ET.parse(pytester.path / result_path).getroot()
    return {case.get("name", ""): case for case in root.iter("testcase")}


def properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def gate_row(result: pytest.RunResult, code: str) -> str:
    """The summary-table row of a benchmark or rubric."""
    return next(line for line in result.outlines if re.match(rf"{re.escape(code)}\s+(\d|[A-Z_]+\s)", line))


def test_pass_fail_and_uncertain_verdicts(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL", "UNCERTAIN"], threshold=0.5)})
    result = run(project, "--junitxml=out.xml")
    result.assert_outcomes(passed=2, failed=2, skipped=0)  # prompt item + c0 pass; c1, c2 fail
    out = result.stdout.str()
    assert "verdict: FAIL" in out and "reason: judged fail on the evidence" in out
    assert "verdict: FAIL (uncertain: listed for human review)" in out
    assert "needs human review (1" in out and "B1::c2" in out
    review = json.loads((project.path / ".llmjudge/review.json").read_text())
    assert [c["case"] for c in review["cases"]] == ["c2"]
    assert result.ret == 1  # 1 of 3 passes: below threshold 0.5
    cases = junit(project)
    assert cases["c1"].find("failure") is not None
    assert properties(cases["c0"])["llmjudge_verdict"] == "pass"


def test_failure_report_names_benchmark_case_line_and_rubric(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=1.0)})
    result = run(project)
    out = result.stdout.str()
    assert "B1 · B1 label" in out
    assert "case c1 at benchmarks/B1.yaml:" in out
    line = int(out.split("case c1 at benchmarks/B1.yaml:")[1].split()[0])
    assert (project.path / "benchmarks/B1.yaml").read_text().splitlines()[line - 1].strip() == "- id: c1"
    assert "Automatic fail if any of the following are true:" in out and "- It is wrong." in out
    assert "Traceback" not in out and "def runtest" not in out


@pytest.mark.parametrize(
    ("directive", "kind", "attempts"),
    [
        ("HTTP401", "http-401", 1),
        ("HTTP429", "rate-limited", 2),
        ("HTTP500", "http-500", 2),
        ("GARBAGE", "invalid-output", 2),
        ("REFUSE", "refusal", 1),
        ("RESET", "transport", 2),
        ("TIMEOUT", "timeout", 2),
    ],
)
def test_judge_failures_are_errors_not_failures(
    project: pytest.Pytester, directive: str, kind: str, attempts: int
) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", directive], threshold=0.5)})
    result = run(project, "--junitxml=out.xml", "--llmjudge-timeout=0.3")
    result.assert_outcomes(passed=2, errors=1)
    out = result.stdout.str()
    assert f"judge ERROR ({kind}) after {attempts} attempt" in out
    assert result.ret == 1
    error_case = junit(project)["c1"]
    assert error_case.find("error") is not None and error_case.find("failure") is None
    assert gate_row(result, "B1").split()[1:6] == ["2", "1", "0", "1", "100%"]  # errors excluded


def test_nineteen_of_twenty_at_threshold_090_exits_zero_with_failure_visible(
    project: pytest.Pytester,
) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS"] * 19 + ["FAIL"], threshold=0.9)})
    result = run(project, "--junitxml=out.xml")
    result.assert_outcomes(passed=20, failed=1)
    assert result.ret == 0
    out = result.stdout.str()
    assert "FAILED benchmarks/B1.yaml::B1::c19" in out
    assert "exit status 0: 1 failing case(s) of B1 are within its gate (pass rate 95.0%, needs 90%)" in out
    assert junit(project)["c19"].find("failure") is not None


def test_threshold_gate_fails_below_threshold(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS"] * 8 + ["FAIL"] * 2, threshold=0.9)})
    result = run(project)
    assert result.ret == 1
    row = gate_row(result, "B1")
    assert "80.0%" in row and "FAIL" in row


def test_hard_gate_fails_on_any_failing_case(project: pytest.Pytester) -> None:
    outcomes = ["PASS"] * 19 + ["FAIL"]
    write(project, {"benchmarks/B1.yaml": bench("B1", outcomes, threshold=0.5, criticality="hard_gate")})
    result = run(project)
    assert result.ret == 1
    row = gate_row(result, "B1")
    assert "FAIL" in row and "hard" in row


def test_null_threshold_is_not_scored_and_other_tests_still_count(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=None)})
    result = run(project)
    assert "not scored" in gate_row(result, "B1")
    assert result.ret == 0


RUBRIC = """
code: R
label: Rubric
aggregation_method: {method}
passing_threshold: {threshold}
benchmarks:
  - B1  # first
  - B2
"""


@pytest.mark.parametrize(
    ("method", "threshold", "score", "status"),
    [
        ("WEIGHTED_AVERAGE", 0.6, 0.25 * 1.0 + 0.75 * 0.5, "PASS"),  # weights 1 and 3
        ("MEAN", 0.8, 0.75, "FAIL"),
        ("MINIMUM", 0.5, 0.5, "PASS"),
        ("MAXIMUM", 1.0, 1.0, "PASS"),
    ],
)
def test_rubric_aggregation(
    project: pytest.Pytester, method: str, threshold: float, score: float, status: str
) -> None:
    write(
        project,
        {
            "benchmarks/B1.yaml": bench(
                "B1", ["PASS", "PASS"], threshold=None, weight=0.1, parent_rubric="R"
            ),
            "benchmarks/B2.yaml": bench(
                "B2", ["PASS", "FAIL"], threshold=None, weight=0.3, parent_rubric="R"
            ),
            "rubrics/R.yaml": RUBRIC.format(method=method, threshold=threshold),
        },
    )
    result = run(project)
    row = gate_row(result, "R")
    assert row.split()[1:5] == [method, f"{score:.3f}", f"{threshold:g}", status]
    assert result.ret == (0 if status == "PASS" else 1)


def test_failing_hard_gate_fails_its_rubric(project: pytest.Pytester) -> None:
    write(
        project,
        {
            "benchmarks/B1.yaml": bench(
                "B1", ["PASS"] * 9 + ["FAIL"], threshold=0.5, criticality="hard_gate"
            ),
            "benchmarks/B2.yaml": bench("B2", ["PASS"], threshold=0.5),
            "rubrics/R.yaml": RUBRIC.format(method="MEAN", threshold=0.1),
        },
    )
    result = run(project)
    row = gate_row(result, "R")
    assert "FAIL" in row and "hard gate failed: B1" in row
    assert result.ret == 1


def test_rubric_with_unselected_benchmarks_is_incomplete(project: pytest.Pytester) -> None:
    write(
        project,
        {
            "benchmarks/B1.yaml": bench("B1", ["PASS"], threshold=0.5),
            "benchmarks/B2.yaml": bench("B2", ["FAIL"], threshold=0.5),
            "rubrics/R.yaml": RUBRIC.format(method="MEAN", threshold=0.9),
        },
    )
    result = run(project, "-k", "B1")
    row = gate_row(result, "R")
    assert "incomplete" in row and "not in this run: B2" in row
    assert result.ret == 0


def test_junit_properties(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=0.5)})
    run(project, "--junitxml=out.xml")
    props = properties(junit(project)["c1"])
    assert props["llmjudge_verdict"] == "fail"
    assert props["llmjudge_reason"] == "judged fail on the evidence"
    assert props["llmjudge_score"] == "0"
    assert props["llmjudge_model"] == "function:fake-judge"
    assert len(props["llmjudge_prompt_hash"]) == 64


def test_no_model_configured_stops_before_judging(pytester: pytest.Pytester) -> None:
    write(pytester, {"benchmarks/B1.yaml": bench("B1", ["PASS"], threshold=0.5)})
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "1 case(s) need a judge model and none is configured" in err
    for source in (
        "--llmjudge-model",
        "LLMJUDGE_MODEL",
        "llmjudge_model",
        "pytest_llmjudge_model",
        "judge: {model",
    ):
        assert source in err


def test_no_cases_anywhere_needs_no_model(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {"benchmarks/B1.yaml": "code: B1\nconcept: x\ninclusion_criteria: Apply when x. Flag if y.\n"},
    )
    result = run(pytester)
    result.assert_outcomes(skipped=1)
    assert result.ret == 0


BLOCKED = """
from pydantic_ai import models
models.ALLOW_MODEL_REQUESTS = False
def pytest_llmjudge_model(config):
    return "openai:from-hook"
"""


@pytest.mark.parametrize(
    ("benchmark_model", "cli", "env", "ini", "expected"),
    [
        ("from-benchmark", "from-cli", "from-env", "from-ini", "openai:from-benchmark"),
        (None, "from-cli", "from-env", "from-ini", "openai:from-cli"),
        (None, None, "from-env", "from-ini", "openai:from-env"),
        (None, None, None, "from-ini", "openai:from-ini"),
        (None, None, None, None, "openai:from-hook"),
    ],
)
def test_model_selection_precedence(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    benchmark_model: str | None,
    cli: str | None,
    env: str | None,
    ini: str | None,
    expected: str,
) -> None:
    pytester.makeconftest(BLOCKED)
    pytester.makeini(f"[pytest]\nllmjudge_attempts = 1\n{'llmjudge_model = openai:' + ini if ini else ''}\n")
    judge = {"judge": {"model": f"openai:{benchmark_model}"}} if benchmark_model else {}
    write(pytester, {"benchmarks/B1.yaml": bench("B1", ["PASS"], threshold=0.5, **judge)})
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-never-sent")
    if env:
        monkeypatch.setenv("LLMJUDGE_MODEL", f"openai:{env}")
    else:
        monkeypatch.delenv("LLMJUDGE_MODEL", raising=False)
    args = ["--junitxml=out.xml", "--llmjudge-base-url=http://127.0.0.1:9/v1"]
    if cli:
        args.append(f"--llmjudge-model=openai:{cli}")
    run(pytester, *args)
    # Model requests are blocked, so the case errors, but it names the model that was chosen
    # and the server it is served by.
    assert properties(junit(pytester)["c0"])["llmjudge_model"] == f"{expected}@http://127.0.0.1:9/v1"


@pytest.mark.parametrize("style", ["short_cot", "long_cot"])
def test_chain_of_thought_styles_read_the_verdict_from_text(project: pytest.Pytester, style: str) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=0.5)})
    result = run(project, f"--llmjudge-prompt-style={style}")
    result.assert_outcomes(passed=2, failed=1)
    assert "verdict: FAIL   score: 0   read from json text" in result.stdout.str()


def test_unreadable_text_verdict_is_an_error_naming_the_cause(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "GARBAGE"], threshold=0.5)})
    result = run(project, "--llmjudge-prompt-style=short_cot")
    result.assert_outcomes(passed=2, errors=1)
    assert "judge ERROR (" in result.stdout.str()


def test_replay_needs_no_api_key_and_errors_on_a_miss(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pytester.makeconftest(BLOCKED)
    write(pytester, {"benchmarks/B1.yaml": bench("B1", ["PASS"], threshold=0.5)})
    result = run(pytester, "--llmjudge-model=openai:gpt-4o", "--llmjudge-cache=replay")
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "judge ERROR (cache-miss)" in out and "B1::c0" in out
    assert "after 0 attempt" not in out
