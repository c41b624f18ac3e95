"""A results file read back gives the records its run was gated from (``results_records``), so that
``llmjudge merge`` gates shards as one run: every case a record is rebuilt from is written again
exactly as the run wrote it, and every benchmark's judge, request, trust and gate settings too.

The files come from real runs: one judge with repeats, human labels and a failing case; a pairwise
run; a three-judge panel with per-member costs (a subprocess run against a fake OpenAI server).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy  # noqa: F401  (in-process pytester runs cannot import numpy a second time)
import pytest
import scipy.stats  # noqa: F401
import statsmodels.stats.multitest
import statsmodels.stats.proportion  # noqa: F401
from conftest import GOOD, JUDGE_CONFTEST, Suite
from fake_openai import FakeOpenAI
from pairwise.test_pairwise_run import PAIRWISE_CONFTEST, mixed_suite
from test_panel import MEMBERS, issue_benchmark, run_panel
from test_panel import panel_server as panel_server  # the fake server fixture, used by name

from pytest_llmjudge.gating.records import CaseRecord
from pytest_llmjudge.reporting.results_file import load_results
from pytest_llmjudge.reporting.results_model import ResultsFile
from pytest_llmjudge.reporting.results_records import records_of, rubrics_of
from pytest_llmjudge.reporting.results_writer import _case, _trust

LABELLED = GOOD.replace(
    "cases:\n",
    "parent_rubric: R\n"
    "calibration_file: data/A-OK1.jsonl\n"
    "judge: {repeats: 3, gate: lower_bound, min_tpr: 0.5, min_tnr: 0.25, min_labels: 2}\n"
    "cases:\n"
    "  - {id: says-fail, candidate_output: FAIL, label: fail}\n",
).replace("threshold: 1.0", "threshold: 0.4")
CALIBRATION = (
    '{"id": "labelled-pass", "candidate_output": "hello there", "label": "pass"}\n'
    '{"id": "labelled-fail", "candidate_output": "FAIL", "label": "fail"}\n'
    '{"id": "wrong-label", "candidate_output": "hello again", "label": "fail"}\n'
)
RUBRIC = (
    "code: R\nlabel: Rubric R\naggregation_method: MINIMUM\npassing_threshold: 0.5\nbenchmarks: [A-OK1]\n"
)


# the conftest judge, except that an output saying FLAKY passes every other call
FLAKY_JUDGE = (
    JUDGE_CONFTEST
    + """
FLIPS = [0]
_steady = judge


def judge(messages, info):
    if "FLAKY" not in "".join(str(getattr(p, "content", "")) for m in messages for p in m.parts):
        return _steady(messages, info)
    FLIPS[0] += 1
    args = {"pass": FLIPS[0] % 2 == 0, "reason": "it depends"}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
"""
)


def labelled(suite: Suite) -> None:
    suite.pytester.makeconftest(FLAKY_JUDGE)
    suite.benchmark("A-OK1", LABELLED + "  - {id: flaky, candidate_output: FLAKY}\n")
    suite.write("data/A-OK1.jsonl", CALIBRATION, dedent=False)
    suite.write("rubrics/R.yaml", RUBRIC)


def rebuilt(data: dict[str, Any]) -> dict[tuple[str, bool, str], CaseRecord]:
    records = records_of(ResultsFile.model_validate(data))
    return {(r.benchmark, r.calibration, r.case): r for r in records}


def assert_round_trip(data: dict[str, Any]) -> dict[tuple[str, bool, str], CaseRecord]:
    """Every case and benchmark setting of ``data`` as its rebuilt record writes it again."""
    records = rebuilt(data)
    assert len(records) == sum(max(1, len(b["cases"])) for b in data["benchmarks"])
    for benchmark in data["benchmarks"]:
        code = benchmark["code"]
        mine = [r for r in records.values() if r.benchmark == code]
        for case in benchmark["cases"]:
            record = records[(code, case["calibration"], case["id"])]
            assert _case(record) == case
        for record in mine:
            assert (record.label, record.threshold, record.criticality, record.weight) == (
                benchmark["label"],
                benchmark["threshold"],
                benchmark["criticality"],
                benchmark["weight"],
            )
            assert record.parent_rubric == benchmark["parent_rubric"]
            assert record.benchmark_cases == benchmark["gate"]["collected"]
            judge = record.judge
            if benchmark["judge"] is None and benchmark["request"] is None:  # nothing was judged
                assert judge is None
                continue
            assert judge is not None
            assert (None if judge.fingerprint is None else asdict(judge.fingerprint)) == benchmark["judge"]
            assert (judge.evaluator_type, judge.repeats, judge.reduce, judge.gate) == (
                benchmark["evaluator_type"],
                benchmark["repeats"],
                benchmark["reduce"],
                benchmark["gate_rule"],
            )
            assert {"instructions": judge.instructions, "rubric": judge.rubric} == benchmark["request"]
            assert _trust(record) == benchmark.get("trust")
    return records


def test_a_judged_run_with_repeats_labels_and_failures_reads_back_as_its_records(suite: Suite) -> None:
    labelled(suite)
    suite.run("--llmjudge-results=run.json")
    data = load_results(suite.root / "run.json")
    records = assert_round_trip(data)
    flaky = records[("A-OK1", False, "flaky")]
    assert flaky.flaky and flaky.stability is not None and flaky.stability < 1
    suite.run("--llmjudge-results=again.json")  # every sample from the cache
    again = assert_round_trip(load_results(suite.root / "again.json"))
    assert all(s.cached for s in again[("A-OK1", False, "says-hello")].samples)
    agreed = records[("A-OK1", True, "labelled-fail")]
    assert agreed.case_label == "fail" and agreed.result == "pass"  # the judge agreed with it
    assert agreed.judge_pass is False
    assert records[("A-OK1", False, "says-fail")].judge_pass is False
    wrong = records[("A-OK1", True, "wrong-label")]
    assert (wrong.result, wrong.judge_pass) == ("fail", True)  # disagreement; the judge said pass
    plain = records[("A-OK1", False, "says-hello")]
    assert plain.judge_pass is True and plain.prompt_hash and plain.nodeid.endswith("says-hello")
    assert plain.model == data["benchmarks"][0]["judge"]["model"] == "function:fake-judge"  # as judged
    assert [s.index for s in plain.samples] == [0, 1, 2] and plain.samples[0].input_tokens > 0
    assert plain.judge is not None and plain.judge.temperature == 0.0  # the judge's settings
    assert not plain.budget_stopped
    assert [(r.code, r.benchmarks) for r in rubrics_of(ResultsFile.model_validate(data))] == [
        (rubric["code"], tuple(rubric["benchmarks"])) for rubric in data["rubrics"]
    ]


def test_a_benchmark_without_cases_reads_back_as_one_empty_record(suite: Suite) -> None:
    labelled(suite)
    empty = GOOD.replace("A-OK1", "B-OK2").split("cases:\n")[0]
    suite.benchmark("B-OK2", empty + "no_cases: true\n")
    code = GOOD.replace("A-OK1", "C-OK3").replace(
        "cases:\n", "evaluator_type: code\nchecks:\n  - {type: contains, value: hello}\ncases:\n"
    )
    suite.benchmark("C-OK3", code)
    suite.run("--llmjudge-results=run.json")
    data = load_results(suite.root / "run.json")
    records = assert_round_trip(data)
    assert records[("C-OK3", False, "says-hello")].model == "checks"  # decided by its checks, no judge
    (record,) = [r for r in records_of(ResultsFile.model_validate(data)) if r.benchmark == "B-OK2"]
    assert (record.case, record.result, record.benchmark_cases) == ("", "skip", 0)


def test_a_pairwise_run_reads_back_as_its_records(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(PAIRWISE_CONFTEST)
    pairs = Suite(pytester)
    mixed_suite(pairs)
    pairs.run("--llmjudge-pairwise", "--llmjudge-results", "run.json")
    data = load_results(pairs.root / "run.json")
    records = assert_round_trip(data)
    alone = records[("P-MIX", False, "alone")]
    assert alone.pairwise is not None and alone.pairwise.unpaired
    win = records[("P-MIX", False, "win-1")]
    assert win.pairwise is not None and (win.pairwise.outcome, win.pairwise.baseline_output) == (
        "win",
        "plain one",
    )
    assert len(win.pairwise.answers) == 2 and win.pairwise.gate == data["benchmarks"][0]["pairwise"]["gate"]


def test_a_panel_run_reads_back_as_its_records(
    pytester: pytest.Pytester, request: pytest.FixtureRequest
) -> None:
    fake: FakeOpenAI = request.getfixturevalue("panel_server")
    pytester.makefile(".yaml", **{"benchmarks/P1": issue_benchmark()})
    run_panel(pytester, fake)
    run_panel(pytester, fake)  # every member's verdict from the cache
    data = load_results(pytester.path / "run.json")
    records = assert_round_trip(data)
    split = records[("P1", False, "b-fails-0")]
    assert split.panel is not None
    assert [m.model.split("@")[0] for m in split.panel.members] == [f"openai:{m}" for m in MEMBERS]
    assert [m.passed for m in split.panel.members] == [True, False, True]
    assert all(m.cached for m in split.panel.members)
