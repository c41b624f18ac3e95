"""A panel benchmark's agreement from its cases' records (members told apart by model, in the order
the cases name them; a pairwise member's outcome its vote), each member against human labels, and
a case record as it arrives from an xdist worker (plain JSON values)."""

from __future__ import annotations

import json
from dataclasses import replace

from pytest_llmjudge.gating.drift import SeenJudge, judges_seen
from pytest_llmjudge.gating.panel_agreement import MemberRate
from pytest_llmjudge.gating.panel_records import (
    MemberRecord,
    PanelRecord,
    benchmark_agreement,
    member_calibration,
)
from pytest_llmjudge.gating.records import CaseRecord, PairwiseRecord, SampleRecord


def panel(*members: MemberRecord) -> PanelRecord:
    return PanelRecord("majority", 1, "pass", False, members)


def test_no_panel_case_has_no_agreement() -> None:
    assert benchmark_agreement([]) is None
    assert benchmark_agreement(iter(())) is None


def test_members_are_told_apart_by_model_in_the_order_the_cases_name_them() -> None:
    records = [
        panel(MemberRecord("a", True), MemberRecord("b", True)),
        panel(MemberRecord("c", False), MemberRecord("b", False)),
        panel(MemberRecord("b", True), MemberRecord("a", False), MemberRecord("c", None)),
    ]
    found = benchmark_agreement(iter(records))
    assert found is not None
    assert found.members == ("a", "b", "c")
    assert found.cases == 3
    assert found.rates == (MemberRate("a", 1, 2, 1), MemberRate("b", 2, 3, 0), MemberRate("c", 0, 1, 2))
    assert found.split_cases == 1  # the third: a fails what b passes
    assert [(p.first, p.second, p.cases, p.agreed) for p in found.pairs] == [
        ("a", "b", 2, 1),
        ("a", "c", 0, 0),
        ("b", "c", 1, 1),
    ]
    assert found.fleiss_cases == 0 and not found.outcomes


def test_a_pairwise_member_s_outcome_is_its_vote_and_an_inconsistent_pair_a_tie() -> None:
    records = [
        panel(MemberRecord("a", None, outcome="win"), MemberRecord("b", None, outcome="inconsistent")),
        panel(MemberRecord("a", None, outcome="loss"), MemberRecord("b", None, outcome="tie")),
        panel(MemberRecord("a", None, outcome="win"), MemberRecord("b", None, outcome="win")),
    ]
    found = benchmark_agreement(records)
    assert found is not None and found.outcomes
    assert found.rates == (MemberRate("a", 2, 3, 0), MemberRate("b", 1, 3, 0))
    assert found.split_cases == 2  # win against a tie, loss against a tie
    (pair,) = found.pairs
    assert (pair.cases, pair.agreed) == (3, 1)


def test_each_member_against_the_labels_of_every_case() -> None:
    labelled = [
        (panel(MemberRecord("a", True)), "pass"),
        (panel(MemberRecord("b", True)), "fail"),
        (panel(MemberRecord("a", False), MemberRecord("b", False)), "fail"),
        (panel(MemberRecord("c", False)), "fail"),
    ]
    found = {c.model: (c.labelled, c.tpr, c.tnr) for c in member_calibration(labelled)}
    assert found == {"a": (2, 1.0, 1.0), "b": (2, None, 0.5), "c": (1, None, 1.0)}
    only_passes = member_calibration([(panel(MemberRecord("a", True)), "pass")])
    assert [(c.tpr, c.tnr) for c in only_passes] == [(1.0, None)]


def test_a_member_s_answers_read_as_pairs_after_a_trip_through_json() -> None:
    member = MemberRecord("openai:a", True, answered=(("a-1", "fp"), ("a-2", None)))
    travelled = MemberRecord(**json.loads(json.dumps(member.__dict__)))
    assert travelled.identities() == (("a-1", "fp"), ("a-2", None))
    assert MemberRecord("m", True).identities() == ()


def test_a_record_from_an_xdist_worker_is_the_record_sent() -> None:
    sent = CaseRecord(
        "B",
        "a",
        "pass",
        model="panel",
        retried=("timeout",),
        samples=(SampleRecord(0, True, answered_model="j-1"),),
        pairwise=PairwiseRecord("win", baseline_only=("gone",)),
        panel=panel(MemberRecord("openai:a", True), MemberRecord("openai:b", False, error="boom")),
    )
    arrived = CaseRecord.from_dict(json.loads(json.dumps(sent.to_dict())))
    assert replace(arrived, panel=None) == replace(sent, panel=None)
    assert arrived.panel is not None and sent.panel is not None
    assert arrived.panel.to_results() == sent.panel.to_results()


def test_a_record_without_optional_lists_still_arrives() -> None:
    bare = {"benchmark": "B", "case": "a", "result": "pass", "pairwise": {"outcome": "loss"}, "extra": 1}
    assert CaseRecord.from_dict(bare) == CaseRecord("B", "a", "pass", pairwise=PairwiseRecord("loss"))


def test_a_panel_record_from_a_worker_keeps_who_answered() -> None:
    member = MemberRecord("openai:a", True, answered=(("a-1", "fp"),))
    sent = CaseRecord("B", "a", "pass", model="panel", panel=panel(member))
    arrived = CaseRecord.from_dict(json.loads(json.dumps(sent.to_dict())))
    assert judges_seen([arrived]) == (SeenJudge("openai:a", "a-1", "fp", 1),)
    assert arrived.panel is not None and arrived.panel.decision == "pass"
