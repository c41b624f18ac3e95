"""Pairwise mode end to end: a candidate's outputs judged against a baseline's in both orders.

The judge prefers an output carrying BETTER, answers "A" whenever an output carries BIASED (a
judge with a position bias), and calls anything else a tie; every call is logged.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import numpy  # noqa: F401  (in-process pytester runs cannot import numpy a second time)
import pytest
import scipy.stats  # noqa: F401
import statsmodels.stats.multitest
import statsmodels.stats.proportion  # noqa: F401
from conftest import Suite

PAIRWISE_CONFTEST = """
import json
import re
from pathlib import Path

import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
CALLS = Path(__file__).parent / "judge_calls.log"


def answer(info, args):
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
    return ModelResponse(parts=[TextPart("<reasoning>compared</reasoning>\\n" + json.dumps(args))])


def judge(messages, info):
    prompt = "".join(
        p.content for m in messages for p in m.parts if isinstance(getattr(p, "content", None), str)
    )
    if "<OutputA>" not in prompt:  # a benchmark judged case by case
        return answer(info, {"pass": "FAIL" not in prompt, "reason": "single"})
    a = re.search(r"<OutputA>\\n(.*?)\\n</OutputA>", prompt, re.S).group(1)
    b = re.search(r"<OutputB>\\n(.*?)\\n</OutputB>", prompt, re.S).group(1)
    if "BIASED" in a or "BIASED" in b:
        winner = "A"
    elif ("BETTER" in a) != ("BETTER" in b):
        winner = "A" if "BETTER" in a else "B"
    else:
        winner = "tie"
    if "BROKEN" in a or "BROKEN" in b:
        raise RuntimeError("the judge broke")
    with CALLS.open("a") as log:
        log.write(f"{a} | {b} -> {winner}\\n")
    reason = f"output {winner} is preferred" if winner != "tie" else "neither"
    return answer(info, {"winner": winner, "reason": reason})


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="pair-judge")
"""


def head(code: str, extra: str = "") -> str:
    return (
        f"code: {code}\nlabel: {code} compared\nconcept: The output is good.\nweight: 1\nthreshold: 0.9\n"
        f"inclusion_criteria: Apply always. Flag a bad output.\n{extra}cases:\n"
    )


def case(case_id: str, candidate: str, baseline: str | None) -> str:
    text = f"  - id: {case_id}\n    candidate_output: {candidate}\n"
    return text + (f"    baseline_output: {baseline}\n" if baseline is not None else "")


@pytest.fixture
def pairs(pytester: pytest.Pytester) -> Suite:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(PAIRWISE_CONFTEST)
    return Suite(pytester)


def results(suite: Suite, name: str = "run.json") -> dict[str, Any]:
    return json.loads((suite.root / name).read_text())  # type: ignore[no-any-return]


def bench(data: dict[str, Any], code: str) -> dict[str, Any]:
    return next(b for b in data["benchmarks"] if b["code"] == code)


def outcomes(data: dict[str, Any], code: str) -> dict[str, str | None]:
    return {c["id"]: c["pairwise"]["outcome"] for c in bench(data, code)["cases"]}


def exact_sign_test(wins: int, losses: int) -> float:
    """Two-sided exact binomial test at p = 1/2, the probabilities no likelier than the observed."""
    n = wins + losses
    if n == 0:
        return 1.0
    observed = Fraction(math.comb(n, wins), 2**n)
    probabilities = [Fraction(math.comb(n, k), 2**n) for k in range(n + 1)]
    return float(min(sum(p for p in probabilities if p <= observed), Fraction(1)))


def mixed_suite(suite: Suite) -> None:
    """P-MIX: 3 wins as placed (candidate BETTER), 2 losses, 2 position-biased, 1 identical, 1 unpaired."""
    suite.benchmark(
        "P-MIX",
        head("P-MIX")
        + case("win-1", "BETTER one", "plain one")
        + case("win-2", "BETTER two", "plain two")
        + case("win-3", "BETTER three", "plain three")
        + case("loss-1", "plain four", "BETTER four")
        + case("loss-2", "plain five", "BETTER five")
        + case("biased-1", "BIASED six", "plain six")
        + case("biased-2", "plain seven", "BIASED seven")
        + case("same", "the same words", "the same words")
        + case("alone", "no baseline here", None),
    )


def test_wins_losses_position_bias_identical_and_unpaired(pairs: Suite) -> None:
    mixed_suite(pairs)
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-results", "run.json")
    data = results(pairs)
    assert outcomes(data, "P-MIX") == {
        "win-1": "win",
        "win-2": "win",
        "win-3": "win",
        "loss-1": "loss",
        "loss-2": "loss",
        "biased-1": "inconsistent",
        "biased-2": "inconsistent",
        "same": "tie",
        "alone": None,
    }
    result.assert_outcomes(passed=7, failed=2, skipped=1)  # and the prompt item
    calls = pairs.judge_calls()
    assert len(calls) == 2 * 7  # both orders of every paired case but the identical one
    assert not any("the same words" in c for c in calls)
    assert not any("no baseline here" in c for c in calls)
    output = result.stdout.str()
    assert "pairwise comparison with the baseline" in output
    assert "P-MIX      3/1/2/2" in output  # wins/ties/losses/inconsistent
    assert "candidate was A: B won (the baseline) — output B is preferred" in output
    assert "candidate was B: A won (the baseline) — output A is preferred" in output
    assert result.ret == 0  # not gated: the two losses are reported, not a failed run


def release_suite(suite: Suite) -> None:
    """P-BETTER: 10 wins; P-WORSE: 1 win, 9 losses, 2 identical ties; P-MIX as above."""
    suite.benchmark(
        "P-BETTER",
        head("P-BETTER") + "".join(case(f"b{i}", f"BETTER {i}", f"plain {i}") for i in range(10)),
    )
    suite.benchmark(
        "P-WORSE",
        head("P-WORSE")
        + case("w0", "BETTER 0", "plain 0")
        + "".join(case(f"w{i}", f"plain {i}", f"BETTER {i}") for i in range(1, 10))
        + case("same-1", "alike", "alike")
        + case("same-2", "alike too", "alike too"),
    )
    mixed_suite(suite)


def test_fail_on_worse_fails_only_the_significantly_worse_benchmark(pairs: Suite) -> None:
    release_suite(pairs)
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-fail-on", "worse", "--llmjudge-results", "run.json")
    data = results(pairs)
    figures = {code: bench(data, code)["pairwise"] for code in ("P-BETTER", "P-WORSE", "P-MIX")}
    assert {code: f["verdict"] for code, f in figures.items()} == {
        "P-BETTER": "better",
        "P-WORSE": "worse",
        "P-MIX": "inconclusive",
    }
    assert (figures["P-WORSE"]["wins"], figures["P-WORSE"]["losses"], figures["P-WORSE"]["ties"]) == (1, 9, 2)
    # the sign test against an exact binomial computed here, and Holm's step-down by hand
    raw = {code: exact_sign_test(f["wins"], f["losses"]) for code, f in figures.items()}
    for code, f in figures.items():
        assert abs(f["p_value"] - raw[code]) < 1e-9
    assert abs(raw["P-WORSE"] - 22 / 1024) < 1e-12 and abs(raw["P-BETTER"] - 2 / 1024) < 1e-12
    assert abs(figures["P-BETTER"]["p_adjusted"] - 3 * raw["P-BETTER"]) < 1e-9
    assert abs(figures["P-WORSE"]["p_adjusted"] - 2 * raw["P-WORSE"]) < 1e-9
    assert figures["P-MIX"]["p_adjusted"] == 1.0
    assert {b["code"]: b["gate"]["status"] for b in data["benchmarks"]} == {
        "P-BETTER": "pass",
        "P-WORSE": "fail",
        "P-MIX": "pass",
    }
    assert result.ret == 1
    assert [r for r in data["exit_reasons"] if r.startswith("gate ")] == [
        "gate P-WORSE failed: significantly worse than the baseline: 1 win(s), 9 loss(es) "
        "(sign test p = 0.043 Holm-adjusted)"
    ]
    # the same suite without the worse benchmark exits 0, its losing cases within their gates
    (pairs.root / "benchmarks/a/P-WORSE.yaml").unlink()
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-fail-on", "worse")
    result.assert_outcomes(passed=18, failed=2, skipped=1)  # with the prompt items
    assert result.ret == 0
    assert "2 case(s) of P-MIX lost to the baseline: are within its pairwise gate" in result.stdout.str()


def test_without_fail_on_a_worse_candidate_is_reported_not_failed(pairs: Suite) -> None:
    release_suite(pairs)
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-results", "run.json")
    assert bench(results(pairs), "P-WORSE")["pairwise"]["verdict"] == "worse"
    assert bench(results(pairs), "P-WORSE")["gate"]["status"] == "not scored"
    assert result.ret == 0


def test_identical_outputs_make_no_call_and_a_rerun_makes_none(pairs: Suite) -> None:
    release_suite(pairs)
    first = pairs.run("--llmjudge-pairwise", "--llmjudge-results", "first.json")
    calls = pairs.judge_calls()
    assert len(calls) == 2 * (10 + 10 + 7)  # both orders of each pair that differs
    assert not any("alike" in c or "the same words" in c for c in calls)
    assert results(pairs, "first.json")["totals"]["calls"] == len(calls)
    (pairs.root / "judge_calls.log").unlink()
    again = pairs.run("--llmjudge-pairwise", "--llmjudge-results", "again.json")
    assert pairs.judge_calls() == []
    assert "0 model call(s)" in again.stdout.str()
    before, after = results(pairs, "first.json"), results(pairs, "again.json")
    assert after["totals"]["calls"] == 0 and after["totals"]["cache_hits"] == len(calls)
    for code in ("P-BETTER", "P-WORSE", "P-MIX"):
        assert outcomes(after, code) == outcomes(before, code)
        answers = [a for c in bench(after, code)["cases"] for a in c["pairwise"]["answers"]]
        assert all(a["cached"] for a in answers)
    assert first.ret == again.ret == 0


def test_a_benchmark_of_its_own_mode_with_an_untrusted_judge(pairs: Suite) -> None:
    pairs.benchmark(
        "P-BIAS",
        head("P-BIAS", "judge: {mode: pairwise, min_consistency: 0.8}\n")
        + "".join(case(f"c{i}", f"BIASED {i}", f"plain {i}") for i in range(4))
        + case("better", "BETTER", "plain"),
    )
    pairs.benchmark("P-ALONE", head("P-ALONE") + case("fine", "fine words", None))
    result = pairs.run("--llmjudge-results", "run.json")  # no --llmjudge-pairwise
    data = results(pairs)
    assert bench(data, "P-ALONE")["pairwise"] is None  # judged case by case
    assert bench(data, "P-ALONE")["cases"][0]["result"] == "pass"
    figures = bench(data, "P-BIAS")["pairwise"]
    assert (figures["inconsistent"], figures["wins"], figures["judged"]) == (4, 1, 5)
    assert figures["position_consistency"] == 0.2 and figures["min_consistency"] == 0.8
    gate = bench(data, "P-BIAS")["gate"]
    assert gate["status"] == "untrusted"
    assert gate["detail"] == "judge position consistency 20.0% of 5 pairs, below judge.min_consistency 80.0%"
    assert bench(data, "P-BIAS")["gate_rule"] == "pairwise"
    assert result.ret == 1


@pytest.mark.parametrize(("margin", "status", "ret"), [("0.05", "fail", 1), ("0.3", "pass", 0)])
def test_non_inferiority_needs_the_lower_bound_above_half_less_the_margin(
    pairs: Suite, margin: str, status: str, ret: int
) -> None:
    # ten ties: win rate 50%, Wilson 95% interval 23.7%-76.3%
    pairs.benchmark(
        "P-NI",
        head("P-NI", "pairwise_gate: non_inferior\n")
        + "".join(case(f"t{i}", f"plain {i}", f"other {i}") for i in range(10)),
    )
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-margin", margin, "--llmjudge-results", "run.json")
    benchmark = bench(results(pairs), "P-NI")
    assert benchmark["pairwise"]["win_rate"] == 0.5 and benchmark["pairwise"]["gate"] == "non_inferior"
    assert abs(benchmark["pairwise"]["win_rate_ci"][0] - 0.2366) < 1e-3
    assert benchmark["gate"]["status"] == status
    if status == "fail":
        assert (
            benchmark["gate"]["detail"]
            == "win rate lower bound 23.7% below 45.0% (pairwise_gate: non_inferior)"
        )
    assert result.ret == ret


def baseline_run(pairs: Suite) -> None:
    """A release run judged case by case: its results file records each case's output."""
    pairs.benchmark(
        "P-FILE",
        head("P-FILE")
        + "".join(case(f"c{i}", out, None) for i, out in enumerate(["plain 0", "same", "BETTER 2", "gone"])),
    )
    pairs.run("--llmjudge-results", "base.json")


def test_baseline_outputs_come_from_the_baseline_results_file(pairs: Suite) -> None:
    baseline_run(pairs)
    pairs.benchmark(
        "P-FILE",
        head("P-FILE")
        + case("c0", "BETTER 0", None)  # win
        + case("c1", "same", None)  # identical: a tie, no call
        + case("c2", "plain 2", None)  # loss
        + case("c5", "new", None)  # not in the baseline run: unpaired
        + case("c6", "BETTER 6", "plain 6"),  # its own baseline_output wins over the file
    )
    result = pairs.run(
        "--llmjudge-pairwise", "--llmjudge-baseline", "base.json", "--llmjudge-results", "cand.json"
    )
    data = results(pairs, "cand.json")
    assert outcomes(data, "P-FILE") == {"c0": "win", "c1": "tie", "c2": "loss", "c5": None, "c6": "win"}
    cases = {c["id"]: c["pairwise"] for c in bench(data, "P-FILE")["cases"]}
    assert (
        cases["c0"]["baseline_source"] == "baseline results" and cases["c0"]["baseline_output"] == "plain 0"
    )
    assert cases["c6"]["baseline_source"] == "case file"
    assert cases["c1"]["identical"] and cases["c1"]["answers"] == []
    assert cases["c5"]["unpaired"] and cases["c5"]["answers"] == []
    figures = bench(data, "P-FILE")["pairwise"]
    assert figures["unpaired_cases"] == {"baseline_only": ["c3"], "candidate_only": ["c5"]}
    assert figures["unpaired"] == 2
    assert data["comparison"] == [] and data["flips"] == []  # pairwise cases are not McNemar-compared
    result.assert_outcomes(passed=4, failed=1, skipped=1)


def test_a_judge_that_errors_in_one_order_makes_an_error_not_a_verdict(pairs: Suite) -> None:
    pairs.benchmark(
        "P-ERR", head("P-ERR") + case("broken", "BROKEN", "plain") + case("ok", "BETTER", "plain")
    )
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-results", "run.json")
    result.assert_outcomes(passed=2, errors=1)
    data = results(pairs)
    broken = next(c for c in bench(data, "P-ERR")["cases"] if c["id"] == "broken")
    assert broken["result"] == "error" and broken["pairwise"]["outcome"] is None
    assert all(a["error"] for a in broken["pairwise"]["answers"])
    assert "judge ERROR (judge-error)" in result.stdout.str()
    assert bench(data, "P-ERR")["pairwise"]["n"] == 1
    assert result.ret == 1


def test_repeats_apply_per_order_and_text_styles_are_read(pairs: Suite) -> None:
    pairs.benchmark(
        "P-REP",
        head("P-REP", "judge: {repeats: 3, prompt_style: short_cot}\n") + case("win", "BETTER", "plain"),
    )
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-results", "run.json")
    (answers,) = [c["pairwise"]["answers"] for c in bench(results(pairs), "P-REP")["cases"]]
    assert [a["sample_winners"] for a in answers] == [["A", "A", "A"], ["B", "B", "B"]]
    assert [a["calls"] for a in answers] == [3, 3]
    assert len(pairs.judge_calls()) == 6
    assert result.ret == 0


def test_compare_pairwise_reports_from_the_results_file_without_a_judge(
    pairs: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_llmjudge.cli.main import main

    release_suite(pairs)
    pairs.run("--llmjudge-pairwise", "--llmjudge-results", "run.json")
    path = str(pairs.root / "run.json")
    (pairs.root / "conftest.py").unlink()  # no judge from here on
    assert main(["compare", "--pairwise", path]) == 0
    out = capsys.readouterr().out
    assert any(line.split()[:2] == ["P-WORSE", "1/2/9/0"] and "worse" in line for line in out.splitlines())
    assert main(["compare", "--pairwise", path, "--fail-on", "worse"]) == 1
    assert "significantly worse than the baseline: P-WORSE" in capsys.readouterr().err
    # recomputed from the cases' outcomes: another alpha decides anew
    assert main(["compare", "--pairwise", path, "--fail-on", "worse", "--alpha", "0.01"]) == 0
    assert main(["show", path]) == 0
    assert "pairwise comparison with the baseline" in capsys.readouterr().out


def test_the_prompt_snapshot_holds_the_pairwise_request(pairs: Suite) -> None:
    pairs.benchmark("P-SNAP", head("P-SNAP", "judge: {mode: pairwise}\n") + case("c", "BETTER", "plain"))
    result = pairs.run("--snapshot-update", syrupy=True)
    assert result.ret == 0
    (snapshot,) = (pairs.root / "benchmarks/a/__snapshots__").iterdir()
    text = snapshot.read_text()
    assert "<OutputA>" in text and "<OutputB>" in text and "COMPARISON:" in text
    assert "=== output schema (final_result) ===" in text and '"winner"' in text
    assert pairs.run(syrupy=True).ret == 0  # the snapshot matches on the next run


def test_xdist_workers_judge_pairs_and_read_the_baseline_file(pairs: Suite) -> None:
    baseline_run(pairs)
    pairs.benchmark(
        "P-FILE",
        head("P-FILE")
        + case("c0", "BETTER 0", None)
        + case("c1", "same", None)
        + case("c2", "plain 2", None),
    )
    release_suite(pairs)
    options = ("--llmjudge-pairwise", "--llmjudge-baseline", "base.json", "--llmjudge-fail-on", "worse")
    result = pairs.run(*options, "--llmjudge-results", "xdist.json", "-n", "2")
    data = results(pairs, "xdist.json")
    assert outcomes(data, "P-FILE") == {"c0": "win", "c1": "tie", "c2": "loss"}
    assert bench(data, "P-FILE")["pairwise"]["unpaired_cases"]["baseline_only"] == ["c3"]
    assert bench(data, "P-BETTER")["pairwise"]["verdict"] == "better"
    # four benchmarks now: Holm's adjustment leaves P-WORSE's p = 0.021 above alpha (3 × 0.021)
    assert bench(data, "P-WORSE")["pairwise"]["verdict"] == "inconclusive"
    assert result.ret == 0


TASK = """\
def run(case):
    if case.source_narrative == "boom":
        raise ValueError("the product broke")
    return case.source_narrative.upper()
"""


def test_a_task_produces_the_candidate_output_then_both_orders_are_judged(pairs: Suite) -> None:
    pairs.write("app/__init__.py", "")
    pairs.write("app/produce.py", TASK)
    pairs.benchmark(
        "P-TASK",
        head("P-TASK", "task: app.produce:run\n")
        + "  - {id: win, source_narrative: better words, baseline_output: plain words}\n"
        + "  - {id: same, source_narrative: kept, baseline_output: KEPT}\n"
        + "  - {id: broken, source_narrative: boom, baseline_output: plain}\n",
    )
    first = pairs.run("--llmjudge-pairwise", "--llmjudge-results", "run.json")
    data = results(pairs)
    assert outcomes(data, "P-TASK") == {"win": "win", "same": "tie", "broken": None}
    cases = {c["id"]: c for c in bench(data, "P-TASK")["cases"]}
    assert (
        cases["win"]["produced"]["output"] == "BETTER WORDS" and cases["win"]["produced"]["source"] == "task"
    )
    assert cases["same"]["pairwise"]["identical"] and cases["broken"]["result"] == "error"
    assert len(pairs.judge_calls()) == 2
    first.assert_outcomes(passed=3, errors=1)
    again = pairs.run(
        "--llmjudge-pairwise", "--llmjudge-results", "again.json"
    )  # outputs and verdicts cached
    assert len(pairs.judge_calls()) == 2
    assert bench(results(pairs, "again.json"), "P-TASK")["cases"][0]["produced"]["source"] == "task cache"
    again.assert_outcomes(passed=3, errors=1)


def test_llmjudge_compile_shows_both_orders_of_a_pairwise_case(
    pairs: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_llmjudge.cli.main import main

    path = pairs.benchmark(
        "P-CMP",
        head("P-CMP", "judge: {mode: pairwise}\n")
        + case("c", "new words", "old words")
        + case("d", "x", None),
    )
    assert main(["compile", str(path)]) == 0
    out = capsys.readouterr().out
    assert "# P-CMP::c  pairwise, candidate_first" in out and "# P-CMP::c  pairwise, baseline_first" in out
    first, second = out.split("pairwise, baseline_first")
    assert first.index('"OUTPUT_A": "new words"') < first.index('"OUTPUT_B": "old words"')
    assert second.index('"OUTPUT_A": "old words"') < second.index('"OUTPUT_B": "new words"')
    assert "# P-CMP::d  prompt" in out and "shown alone" in out
