"""The terminal summary's release lines, exactly as printed: pass-rate intervals, the baseline
comparison table, the task step's line and models, and a panel's agreement (and its results-file
object). The run-level tests check these lines appear; here each figure and word is pinned."""

from __future__ import annotations

from typing import Any

from pytest_llmjudge.gating.gates import BenchmarkGate
from pytest_llmjudge.gating.panel_records import MemberRecord, PanelRecord
from pytest_llmjudge.gating.records import CaseRecord, ProducedOutput
from pytest_llmjudge.gating.statistics import RateInterval
from pytest_llmjudge.reporting.panel_summary import panel_lines, panel_object
from pytest_llmjudge.reporting.run_summary import comparison_table, interval_line, interval_lines
from pytest_llmjudge.reporting.task_summary import task_line, task_lines, task_model_lines


def test_an_interval_line_says_the_rate_its_interval_and_what_it_is_over() -> None:
    assert interval_line("A1", 0.95, 0.9, 0.975, 40, "point") == (
        "  A1: pass rate 95.0% of 40 verdicts, 95% interval 90.0%–97.5%"
    )
    assert interval_line("A1", 0.5, 0.2, 0.8, 19, "lower_bound") == (
        "  A1: pass rate 50.0% of 19 verdicts, 95% interval 20.0%–80.0%, low evidence, "
        "gate on the lower bound"
    )
    assert interval_line("A1", 0.5, 0.4, 0.6, 20, "corrected", samples=60) == (
        "  A1: pass rate 50.0% of 20 case verdicts (60 samples reduced per case), "
        "95% interval 40.0%–60.0%, gate on the calibration-corrected rate"
    )
    assert interval_line("A1", 0.5, 0.4, 0.6, 20, "corrected_lower_bound", samples=20) == (
        "  A1: pass rate 50.0% of 20 verdicts, 95% interval 40.0%–60.0%, "
        "gate on the lower bound of the calibration-corrected rate"
    )
    for missing in ((None, 0.1, 0.2), (0.1, None, 0.2), (0.1, 0.2, None)):
        assert interval_line("A1", *missing, 5, "point") == "  A1: no verdicts"


def gate(code: str, interval: RateInterval | None, rule: str = "point") -> BenchmarkGate:
    return BenchmarkGate(
        code, code, 3, 2, 1, 0, 0, 0, 0.5, "threshold_gate", 1.0, None, gate_rule=rule, interval=interval
    )


def test_interval_lines_give_every_gate_its_line() -> None:
    interval = RateInterval(2 / 3, 0.2, 0.94, 3, 9, "wilson", True)
    assert interval_lines([gate("A1", interval, "lower_bound"), gate("B2", None)]) == [
        "pass rates with 95% intervals:",
        "  A1: pass rate 66.7% of 3 case verdicts (9 samples reduced per case), 95% interval 20.0%–94.0%, "
        "low evidence, gate on the lower bound",
        "  B2: no verdicts",
    ]


def comparison(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "benchmark": "A-MED1",
        "baseline_pass_rate": 0.9,
        "candidate_pass_rate": 0.75,
        "b": 6,
        "c": 0,
        "p_adjusted": 0.03125,
        "mde": 0.125,
        "verdict": "regressed",
        "unpaired": {"baseline_only": [], "candidate_only": []},
    }
    return {**row, **overrides}


def test_the_comparison_table_one_row_per_benchmark_and_its_unpaired_cases() -> None:
    unpaired = {"baseline_only": ["x", "y"], "candidate_only": ["z"]}
    rows = [
        comparison(),
        comparison(
            benchmark="B-ALG1",
            baseline_pass_rate=None,
            p_adjusted=None,
            mde=None,
            verdict="new",
            unpaired=unpaired,
        ),
    ]
    assert comparison_table(rows) == [
        "baseline comparison (paired by case id; exact McNemar, Holm-adjusted):",
        "  benchmark        baseline      now   b   c   p adj    MDE  verdict",
        "  A-MED1              90.0%    75.0%   6   0  0.0312  12.5%  regressed",
        "  B-ALG1                  -    75.0%   6   0       -      -  new",
        "    unpaired: 2 only in the baseline, 1 only now",
    ]
    only_now = comparison(unpaired={"baseline_only": [], "candidate_only": ["z"]})
    assert comparison_table([only_now])[-1] == "    unpaired: 0 only in the baseline, 1 only now"
    assert comparison_table([]) == [
        "baseline comparison (paired by case id; exact McNemar, Holm-adjusted):",
        "  benchmark        baseline      now   b   c   p adj    MDE  verdict",
        "  no benchmark of this run is in the baseline",
    ]


def record(
    case: str, *, source: str | None = None, result: str = "pass", reason: str = "", **produced: Any
) -> CaseRecord:
    output = None if source is None else ProducedOutput(source=source, output="out", **produced)
    return CaseRecord(benchmark="T1", case=case, result=result, reason=reason, produced=output)


def test_the_task_line_counts_outputs_produced_cached_and_task_errors_by_kind() -> None:
    records = [
        record("a", source="task"),
        record("b", source="task"),
        record("c", source="task cache"),
        record("d", source="case file"),
        record("e", result="error", reason="task-timeout: the task took longer than 30 s"),
        record("f", result="error", reason="task-error: ValueError: bad"),
        record("g", result="error", reason="task-timeout: again"),
        record("h", result="error", reason="timeout: the judge took too long"),  # the judge's
        record("i", result="fail", reason="task-looking reason of a failed case"),
    ]
    assert task_line(records) == (
        "task: 2 output(s) produced, 1 from the output cache, 3 error(s) (2 task-timeout, 1 task-error)"
    )
    assert task_line([record("a", source="task")]) == "task: 1 output(s) produced, 0 error(s)"
    only_errors = [
        record("x", result="error", reason="task-error: one"),
        record("y", result="error", reason="task-crash: two"),
    ]
    assert task_line(only_errors) == "task: 0 output(s) produced, 2 error(s) (1 task-crash, 1 task-error)"
    assert task_line([record("d", source="case file"), record("e")]) is None
    assert task_lines([record("d", source="case file")]) == []


def test_the_task_models_that_answered_once_each_sorted() -> None:
    answered = {"model": "gpt-4o-mini-2024-07-18", "fingerprint": "fp_1"}
    records = [
        record("a", source="task", task="openai:gpt-4o-mini", answered_by=answered),
        record("b", source="task cache", task="openai:gpt-4o-mini", answered_by=answered),
        record("c", source="task", task="anthropic:claude", answered_by={"model": "claude-3"}),
        record("d", source="task", task="python:tasks.run"),
    ]
    assert task_model_lines(records) == [
        "task model anthropic:claude answered as claude-3",
        "task model openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 (fingerprint fp_1)",
    ]
    assert task_lines(records) == [
        "task: 3 output(s) produced, 1 from the output cache, 0 error(s)",
        *task_model_lines(records),
    ]


def panel(decision: str, *votes: bool | None, split: bool = False) -> PanelRecord:
    members = tuple(
        MemberRecord(model, vote, error=None if vote is not None else "http-500")
        for model, vote in zip(("openai:a", "openai:b", "openai:c"), votes, strict=True)
    )
    return PanelRecord("majority", 2, decision, split, members)


def judged(case: str, vote: PanelRecord, label: str | None = None) -> CaseRecord:
    return CaseRecord(
        benchmark="P1", case=case, result="pass", panel=vote, case_label=label, calibration=label is not None
    )


def test_panel_lines_give_each_members_rate_and_the_pairs_agreement() -> None:
    records = [
        judged("1", panel("pass", True, True, True)),
        judged("2", panel("pass", True, False, True, split=True)),
        judged("3", panel("fail", False, False, None)),  # those who answered agree
        judged("4", panel("fail", False, False, False)),
        judged("5", panel("pass", True, True, True), label="pass"),
        judged("6", panel("pass", True, True, False, split=True), label="fail"),
        CaseRecord(benchmark="Q2", case="1", result="pass"),  # no panel
    ]
    lines = panel_lines(records)
    assert lines[0] == (
        "panel of P1 (majority, 2 of 3 must answer): 4 cases, 1 split, "
        "Fleiss' κ 0.55, effective judges 1.3 of 3"  # κ over the 3 cases every member answered
    )
    assert lines[1:4] == [
        "  1. openai:a: passes 50.0 % (2 of 4)",
        "  2. openai:b: passes 25.0 % (1 of 4)",
        "  3. openai:c: passes 66.7 % (2 of 3, 1 errored)",
    ]
    assert lines[4].startswith("  Cohen's κ: 1–2 ") and ", 1–3 " in lines[4] and ", 2–3 " in lines[4]
    assert (
        lines[5] == "  members against 2 human labels: "
        "1. TPR 1.00 TNR 0.00, 2. TPR 1.00 TNR 0.00, 3. TPR 1.00 TNR 1.00"
    )
    assert len(lines) == 6
    assert panel_lines([CaseRecord(benchmark="Q2", case="1", result="pass")]) == []


def test_a_panel_of_labelled_cases_only_is_summed_up_over_them() -> None:
    lines = panel_lines([judged("5", panel("pass", True, True, True), label="pass")])
    assert lines[0].startswith("panel of P1 (majority, 2 of 3 must answer): 1 cases, 0 split")
    assert (
        lines[-1]
        == "  members against 1 human labels: 1. TPR 1.00 TNR n/a, 2. TPR 1.00 TNR n/a, 3. TPR 1.00 TNR n/a"
    )


def test_the_panel_object_of_the_results_file_counts_gated_cases_only() -> None:
    records = [
        judged("1", panel("pass", True, True, True)),
        judged("2", panel("pass", True, False, True, split=True)),
        judged("5", panel("fail", False, False, False), label="fail"),  # calibration: not counted
    ]
    found = panel_object(records)
    assert found is not None
    assert (found["cases"], found["split_cases"]) == (2, 1)
    assert found["members"] == [
        {"model": "openai:a", "passes": 2, "answered": 2, "errors": 0, "pass_rate": 1.0},
        {"model": "openai:b", "passes": 1, "answered": 2, "errors": 0, "pass_rate": 0.5},
        {"model": "openai:c", "passes": 2, "answered": 2, "errors": 0, "pass_rate": 1.0},
    ]
    assert [(p["first"], p["second"]) for p in found["pairs"]] == [
        ("openai:a", "openai:b"),
        ("openai:a", "openai:c"),
        ("openai:b", "openai:c"),
    ]
    assert set(found) == {
        "cases",
        "split_cases",
        "members",
        "pairs",
        "fleiss_kappa",
        "fleiss_cases",
        "mean_correlation",
        "effective_judges",
    }
    assert found["fleiss_cases"] == 2
    assert panel_object([CaseRecord(benchmark="Q2", case="1", result="pass")]) is None
