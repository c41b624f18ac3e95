"""``results_merge`` in process: which files are refused as shards of one suite and what the message
names, the order of merged records, what the shards' exit reasons and costs add up to.
(``tests/test_merge.py`` merges the shards of real runs end to end.)"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_llmjudge.gating.exit_status import TESTS_FAILED
from pytest_llmjudge.gating.records import CaseRecord
from pytest_llmjudge.gating.run_verdict import NOTHING_FAILED, RunVerdict
from pytest_llmjudge.reporting.results_merge import (
    MergeError,
    Shard,
    _collection_order,
    added_costs,
    check_shards,
    merged_records,
    merged_results,
    merged_verdict,
    pending_of,
    signals_of,
    with_pending,
)
from pytest_llmjudge.reporting.results_model import ResultsFile

from .results_factory import make_results

Raw = dict[str, Any]


def shard(name: str, raw: Raw) -> Shard:
    return Shard(name, ResultsFile.model_validate(raw), raw)


def split(raw: Raw) -> tuple[Raw, Raw]:
    """Two shards of one run: the first half of each benchmark's cases, and the rest."""
    one, two = copy.deepcopy(raw), copy.deepcopy(raw)
    for first, second in zip(one["benchmarks"], two["benchmarks"], strict=True):
        cases = first["cases"]
        first["cases"], second["cases"] = cases[: len(cases) // 2], cases[len(cases) // 2 :]
        first["gate"]["collected"] = second["gate"]["collected"] = len(cases)
    return one, two


@pytest.fixture
def halves() -> tuple[Raw, Raw]:
    return split(make_results(24))


def refusal(*shards: Shard) -> str:
    with pytest.raises(MergeError) as refused:
        check_shards(shards)
    return str(refused.value)


def test_the_halves_of_one_run_are_shards(halves: tuple[Raw, Raw]) -> None:
    one, two = halves
    check_shards([shard("s1.json", one), shard("s2.json", two)])  # no error


def test_one_file_is_not_enough() -> None:
    assert refusal(shard("s1.json", make_results(6))) == "give the results files of two shards or more"


def test_other_settings_are_refused_naming_the_setting_and_both_values(halves: tuple[Raw, Raw]) -> None:
    one, two = halves
    two["settings"]["margin"] = 0.1
    assert refusal(shard("s1.json", one), shard("s2.json", two)) == (
        "s2.json: settings.margin differs from s1.json's: 0.05 there, 0.1 here"
    )


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("threshold", 0.5, "threshold differs from s1.json's: 0.9 there, 0.5 here"),
        (
            "label",
            "Other",
            "label differs from s1.json's: 'Medications extracted correctly' there, 'Other' here",
        ),
        ("repeats", 5, "repeats differs from s1.json's: 1 there, 5 here"),
        ("criticality", "hard_gate", "criticality differs"),
        ("weight", 0.9, "weight differs"),
        ("gate_rule", "lower_bound", "gate_rule differs"),
        ("reduce", "mean", "reduce differs"),
        ("evaluator_type", "code", "evaluator_type differs"),
        ("parent_rubric", "B", "parent_rubric differs"),
    ],
)
def test_a_benchmark_set_up_otherwise_is_refused_naming_what_differs(
    halves: tuple[Raw, Raw], key: str, value: Any, named: str
) -> None:
    one, two = halves
    two["benchmarks"][0][key] = value
    message = refusal(shard("s1.json", one), shard("s2.json", two))
    assert message.startswith(f"s2.json: benchmark A-MED1: {named}")


def test_another_judge_is_refused_naming_the_judges_field(halves: tuple[Raw, Raw]) -> None:
    one, two = halves
    model = one["benchmarks"][0]["judge"]["model"]
    two["benchmarks"][0]["judge"]["model"] = "openai:o3"
    assert refusal(shard("s1.json", one), shard("s2.json", two)) == (
        f"s2.json: benchmark A-MED1: judge.model differs from s1.json's: {model!r} there, 'openai:o3' here"
    )


def test_another_request_or_trust_is_refused(halves: tuple[Raw, Raw]) -> None:
    one, two = halves
    two["benchmarks"][1]["request"]["rubric"] = "another rubric"
    assert "benchmark A-NEG1: request.rubric differs from s1.json's" in refusal(
        shard("s1.json", one), shard("s2.json", two)
    )
    one, two = split(make_results(24))
    two["benchmarks"][1]["trust"] = {"min_tpr": 0.9, "min_tnr": None, "min_labels": None}
    assert "benchmark A-NEG1: trust differs from s1.json's: None there" in refusal(
        shard("s1.json", one), shard("s2.json", two)
    )


def test_shards_that_collected_other_cases_are_refused(halves: tuple[Raw, Raw]) -> None:
    one, two = halves
    two["benchmarks"][0]["gate"]["collected"] += 1
    collected = one["benchmarks"][0]["gate"]["collected"]
    assert refusal(shard("s1.json", one), shard("s2.json", two)) == (
        f"s2.json: benchmark A-MED1 has {collected + 1} cases, {collected} in s1.json: "
        "shards of one suite collect the same cases"
    )


def test_a_case_in_two_shards_is_refused_but_a_calibration_case_of_the_same_id_is_not(
    halves: tuple[Raw, Raw],
) -> None:
    one, two = halves
    two["benchmarks"][0]["cases"].append(copy.deepcopy(one["benchmarks"][0]["cases"][0]))
    case = one["benchmarks"][0]["cases"][0]["id"]
    assert refusal(shard("s1.json", one), shard("s2.json", two)) == (
        f"s2.json: case A-MED1::{case} is also in s1.json: each case belongs to one shard"
    )
    one, two = split(make_results(24))
    twin = copy.deepcopy(one["benchmarks"][0]["cases"][0])
    twin["calibration"] = not twin["calibration"]
    two["benchmarks"][0]["cases"].append(twin)
    check_shards([shard("s1.json", one), shard("s2.json", two)])


def test_merged_records_come_in_collection_order_and_empty_records_give_way(
    halves: tuple[Raw, Raw],
) -> None:
    one, two = halves
    whole = make_results(24)
    expected = [(b["code"], c["id"]) for b in whole["benchmarks"] for c in b["cases"]]
    records = merged_records([shard("s2.json", two), shard("s1.json", one)])  # any order of files
    assert sorted((r.benchmark, r.case) for r in records) == sorted(expected)
    located = [(r.nodeid.split("::")[0], int(r.location.rpartition(":")[2]), r.case) for r in records]
    assert located == sorted(located)
    # a shard that ran none of a benchmark's cases keeps an empty record for it; merged, it goes
    three = copy.deepcopy(one)
    for benchmark in three["benchmarks"]:
        benchmark["cases"] = []
    records = merged_records([shard("s1.json", one), shard("s3.json", three)])
    assert all(r.case for r in records) and len(records) == sum(len(b["cases"]) for b in one["benchmarks"])
    only_empty = merged_records([shard("s3.json", three), shard("s4.json", copy.deepcopy(three))])
    # no case, no line: they keep the order of the files' benchmarks
    assert [(r.benchmark, r.case) for r in only_empty] == [(b["code"], "") for b in three["benchmarks"]]


def test_a_record_without_a_line_sorts_first_in_its_file() -> None:
    plain = CaseRecord(benchmark="A", case="b", result="pass", nodeid="f.yaml::A::b", location="f.yaml:9")
    unlocated = CaseRecord(benchmark="A", case="a", result="pass", nodeid="f.yaml::A::a", location="")
    assert _collection_order(plain) == ("f.yaml", 9, "b")
    assert _collection_order(unlocated) == ("f.yaml", 0, "a")
    bare = CaseRecord(benchmark="A", case="c", result="pass", location="g.yaml:3")  # no node id
    assert _collection_order(bare) == ("g.yaml", 3, "c")


def reasons(*lines: str) -> Raw:
    raw = make_results(6)
    raw["exit_reasons"] = list(lines)
    return raw


def test_signals_of_the_shards_exit_reasons() -> None:
    records = [CaseRecord(benchmark="A", case="a", result="pass")]
    quiet = signals_of([shard("s1.json", reasons(NOTHING_FAILED))], records)
    assert (quiet.status, quiet.broken, quiet.snapshot_failed, quiet.over_budget) == (0, False, False, None)
    loud = signals_of(
        [
            shard("s1.json", reasons("pytest stopped with exit status 3 (internal error)")),
            shard(
                "s2.json",
                reasons(
                    "a benchmark or rubric file did not load (errors above)",
                    "compiled judge requests differ from their snapshots (run with --snapshot-update)",
                    "over budget: spent $2.00 (calls already in flight, or usage above its "
                    "projection, passed it)",
                ),
            ),
        ],
        records,
    )
    assert (loud.status, loud.broken, loud.snapshot_failed) == (3, True, True)
    assert loud.over_budget is not None and loud.over_budget.startswith("over budget: spent $2.00")
    failed = [*records, CaseRecord(benchmark="A", case="b", result="error")]
    assert signals_of([shard("s1.json", reasons())], failed).status == TESTS_FAILED
    empty_failed = [CaseRecord(benchmark="A", case="", result="fail")]  # no case: not an item
    assert signals_of([shard("s1.json", reasons())], empty_failed).status == 0
    broken = signals_of(
        [shard("s1.json", reasons("a benchmark or rubric file did not load (errors above)"))], []
    )
    assert broken.status == TESTS_FAILED


def test_pending_batches_add_up_over_the_shards() -> None:
    assert pending_of([shard("s1.json", reasons(NOTHING_FAILED))]) is None
    one = reasons("pending: 1 request in 1 batch; collect with pytest --llmjudge-batch=collect")
    assert pending_of([shard("s1.json", one)]) == (
        "pending: 1 request in 1 batch; collect with pytest --llmjudge-batch=collect (in each shard's job)"
    )
    two = reasons("pending: 4 requests in 2 batches; collect with pytest --llmjudge-batch=collect")
    assert pending_of([shard("s1.json", one), shard("s2.json", two)]) == (
        "pending: 5 requests in 3 batches; collect with pytest --llmjudge-batch=collect (in each shard's job)"
    )


def test_a_pending_reason_fails_the_merged_verdict_in_place_of_nothing_failed() -> None:
    from pytest_llmjudge.gating.run_verdict import RunGates

    gates = RunGates(())
    passed = RunVerdict(gates, 0, (NOTHING_FAILED,))
    assert with_pending(passed, None) is passed
    pending = with_pending(passed, "pending: 1 request in 1 batch; collect with x (in each shard's job)")
    assert pending.status == TESTS_FAILED
    assert pending.reasons == ("pending: 1 request in 1 batch; collect with x (in each shard's job)",)
    failed = with_pending(RunVerdict(gates, 3, ("gate A failed",)), "pending: …")
    assert (failed.status, failed.reasons) == (3, ("gate A failed", "pending: …"))


def cost(usd: float | None, priced: float, saved: float, *unpriced: str) -> Raw:
    return {
        "usd": usd,
        "priced_usd": priced,
        "saved_usd": saved,
        "unpriced": [{"model": m, "reason": f"no price for {m}"} for m in unpriced],
    }


def test_costs_add_up_and_are_unknown_when_any_part_is() -> None:
    assert added_costs([cost(1.5, 1.5, 0.25), None, cost(2.0, 2.0, 0.5)]) == cost(3.5, 3.5, 0.75)
    assert added_costs(
        [cost(1.5, 1.5, 0.0), cost(None, 2.0, 0.0, "m1"), cost(None, 0.0, 0.0, "m1", "m2")]
    ) == (cost(None, 3.5, 0.0, "m1", "m2"))
    assert added_costs([]) == cost(0, 0, 0)


def test_merged_results_add_up_the_shards_counts_costs_and_judges(halves: tuple[Raw, Raw]) -> None:
    one, two = halves
    for raw, calls, usd in ((one, 5, 1.0), (two, 7, 2.5)):
        raw["totals"].update(calls=calls, cache_hits=calls + 1, input_tokens=10 * calls, output_tokens=calls)
        raw["totals"]["cost"] = cost(usd, usd, 0.5)
        raw["benchmarks"][0]["cost"] = cost(usd, usd, 0.25)
        raw["benchmarks"][0]["judges"] = [
            {"requested": "openai:j", "model": "j-1", "fingerprint": None, "verdicts": calls},
            {
                "requested": "openai:j",
                "model": "j-2",
                "fingerprint": "fp",
                "verdicts": 1 if raw is one else 9,
            },
        ]
    one["started"], one["finished"] = "2026-11-23T10:00:00Z", "2026-11-23T11:00:00Z"
    two["started"], two["finished"] = "2026-11-23T09:00:00Z", "2026-11-23T10:45:00Z"
    shards = [shard("s1.json", one), shard("s2.json", two)]
    records = merged_records(shards)
    verdict = merged_verdict(records, shards, baseline=None, baseline_error=None, calibrations=[])
    data = merged_results(shards, records, verdict, ["llmjudge", "merge"])
    totals = data["totals"]
    assert (totals["calls"], totals["cache_hits"], totals["input_tokens"], totals["output_tokens"]) == (
        12,
        14,
        120,
        12,
    )
    assert totals["cost"] == cost(3.5, 3.5, 1.0)
    first = next(b for b in data["benchmarks"] if b["code"] == "A-MED1")
    assert first["cost"] == cost(3.5, 3.5, 0.5)
    assert [(j["model"], j["verdicts"]) for j in first["judges"]] == [("j-2", 10), ("j-1", 12)][::-1]
    whole = make_results(24)
    assert [c["id"] for c in first["cases"]] == [c["id"] for c in whole["benchmarks"][0]["cases"]]
    assert first["cases"] == whole["benchmarks"][0]["cases"]  # each case as its shard wrote it
    assert (data["started"], data["finished"]) == ("2026-11-23T09:00:00.000Z", "2026-11-23T11:00:00.000Z")
    assert data["command"] == ["llmjudge", "merge"]
