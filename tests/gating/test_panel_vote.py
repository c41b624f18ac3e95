"""A panel's vote under each rule, and its agreement statistics, on plain values."""

from __future__ import annotations

import pytest

from pytest_llmjudge.gating.panel import MemberVerdict, panel_reason, vote
from pytest_llmjudge.gating.panel_agreement import (
    cohen_kappa,
    effective_judges,
    fleiss_kappa,
    panel_agreement,
)
from pytest_llmjudge.gating.panel_records import MemberRecord, PanelRecord, member_calibration

P, F, E = True, False, None


@pytest.mark.parametrize(
    ("verdicts", "rule", "decision"),
    [
        ((P, P, F), "majority", "pass"),
        ((P, F, F), "majority", "fail"),
        ((P, F, P, F), "majority", "uncertain"),  # an even split fails and goes to review
        ((P, F, E), "majority", "uncertain"),  # one errored: the two others split
        ((P, P, P), "unanimous", "pass"),
        ((P, P, F), "unanimous", "fail"),
        ((P, P, E), "unanimous", "pass"),  # every member that answered passes
        ((F, F, P), "any", "pass"),
        ((F, F, F), "any", "fail"),
    ],
)
def test_each_rule(verdicts: tuple[bool | None, ...], rule: str, decision: str) -> None:
    assert vote(verdicts, rule, min_members=2).decision == decision


def test_too_few_answers_is_an_error_whatever_the_rule() -> None:
    for rule in ("majority", "unanimous", "any"):
        result = vote((P, E, E), rule, min_members=2)
        assert result.decision == "error"
        assert (result.passes, result.fails, result.errors) == (1, 0, 2)
    assert vote((P, E, E), "any", min_members=1).decision == "pass"


def test_split_is_disagreement_among_those_that_answered() -> None:
    assert vote((P, P, F), "majority", 2).split
    assert not vote((P, P, E), "majority", 2).split
    assert not vote((F, F, F), "unanimous", 2).split


def test_bad_rule_and_min_members_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown panel rule"):
        vote((P, P), "mean", 1)
    with pytest.raises(ValueError, match="at least 1"):
        vote((P, P), "majority", 0)


def test_reason_names_every_member_and_its_error() -> None:
    members = [
        MemberVerdict("openai:a", True, "fine"),
        MemberVerdict("openai:b", False, "misses the date"),
        MemberVerdict("openai:c", None, error="transport: timed out"),
    ]
    text = panel_reason(members, vote([m.passed for m in members], "majority", 2))
    assert text.splitlines() == [
        "panel: 1 of 2 judges pass (majority, 1 errored)",
        "  openai:a: pass: fine",
        "  openai:b: fail: misses the date",
        "  openai:c: ERROR transport: timed out",
    ]


def issue_cases() -> list[tuple[bool, bool, bool]]:
    """The issue's 12 cases: 4 all pass, 4 only the second fails, 2 all fail, 2 first and third fail."""
    return [(P, P, P)] * 4 + [(P, F, P)] * 4 + [(F, F, F)] * 2 + [(F, P, F)] * 2


def test_issue_panel_statistics() -> None:
    stats = panel_agreement(["a", "b", "c"], issue_cases())
    assert [round(r.rate or 0, 3) for r in stats.rates] == [0.667, 0.5, 0.667]
    assert stats.split_cases == 6
    # statsmodels.stats.inter_rater.fleiss_kappa gives 0.298701... for the same table
    assert stats.fleiss_kappa == pytest.approx(0.2987013, abs=1e-6)
    kappas = {(p.first, p.second): p.kappa for p in stats.pairs}
    assert kappas[("a", "c")] == pytest.approx(1.0)
    assert kappas[("a", "b")] == pytest.approx(0.0, abs=1e-12)
    # ρ̄ = (0 + 1 + 0) / 3; n_eff = 3 / (1 + 2/3)
    assert stats.mean_correlation == pytest.approx(1 / 3)
    assert stats.effective_judges == pytest.approx(1.8)


def test_errored_votes_leave_rates_and_kappas_to_the_answers() -> None:
    stats = panel_agreement(["a", "b"], [(P, P), (F, F), (P, E), (E, F)])
    assert [(r.passes, r.answered, r.errors) for r in stats.rates] == [(2, 3, 1), (1, 3, 1)]
    assert stats.pairs[0].cases == 2 and stats.pairs[0].kappa == pytest.approx(1.0)
    assert stats.fleiss_cases == 2


def test_undefined_agreement_is_none() -> None:
    assert cohen_kappa([True, True], [True, True]) is None  # chance agreement is 1
    assert fleiss_kappa([]) is None
    assert fleiss_kappa([[True, True], [True, True]]) is None
    stats = panel_agreement(["a", "b"], [(P, P), (P, P)])
    assert stats.mean_correlation is None and stats.effective_judges is None


def test_effective_judges_bounds() -> None:
    assert effective_judges(4, 0.0) == 4
    assert effective_judges(4, 1.0) == 1
    assert effective_judges(4, -0.5) == 4  # anti-correlated votes are not worth more than n
    assert effective_judges(9, 0.5) == pytest.approx(1.8)  # 9 / (1 + 8 × 0.5)


def test_each_member_against_human_labels() -> None:
    def record(*votes: bool | None) -> PanelRecord:
        members = tuple(MemberRecord(name, vote) for name, vote in zip("abc", votes, strict=True))
        return PanelRecord("majority", 2, "pass", False, members)

    labelled = [(record(P, F, P), "pass"), (record(P, P, E), "pass"), (record(F, P, F), "fail")]
    found = {c.model: (c.labelled, c.tpr, c.tnr) for c in member_calibration(labelled)}
    assert found == {"a": (3, 1.0, 1.0), "b": (3, 0.5, 0.0), "c": (2, 1.0, 1.0)}


def test_votes_must_match_members() -> None:
    with pytest.raises(ValueError, match="one verdict per panel member"):
        panel_agreement(["a", "b"], [(P,)])


# -- pairwise mode: the panel votes on the candidate's outcome ------------------------------------

PAIR_CASES = [
    ("win", "win", "win"),
    ("win", "tie", "win"),
    ("loss", "loss", "loss"),
    ("tie", "loss", "loss"),
    ("win", "loss", "tie"),
    ("tie", "tie", "tie"),
]


@pytest.mark.parametrize(
    ("outcomes", "rule", "least", "voted"),
    [
        (("win", "tie", "win"), "majority", 2, "win"),
        (("win", "loss", "tie"), "majority", 2, "inconsistent"),  # no majority: reviewed, counted a tie
        (("win", "inconsistent", "inconsistent"), "majority", 2, "tie"),  # an inconsistent pair is a tie
        (("win", None, "tie"), "majority", 2, "inconsistent"),  # 1 of 2 is not more than half
        (("win", "tie", "win"), "unanimous", 2, "tie"),  # a win needs every member's
        (("win", "loss", "win"), "unanimous", 2, "loss"),
        (("loss", "tie", "loss"), "any", 2, "tie"),
        (("loss", "win", "loss"), "any", 2, "win"),
        (("win", None, None), "majority", 2, None),  # too few answered: an ERROR
    ],
)
def test_a_pairwise_panel_votes_on_the_outcome(
    outcomes: tuple[str | None, ...], rule: str, least: int, voted: str | None
) -> None:
    from pytest_llmjudge.pipeline.panel import pair_vote

    assert pair_vote(outcomes, rule, least) == voted


def test_agreement_over_pairwise_outcomes_counts_three_categories_as_statsmodels_does() -> None:
    # statsmodels' fleiss_kappa on the category table gives 0.416666..., cohens_kappa of the first
    # two members 0.307692...
    assert fleiss_kappa(PAIR_CASES) == pytest.approx(0.4166666666666666)
    assert cohen_kappa([c[0] for c in PAIR_CASES], [c[1] for c in PAIR_CASES]) == pytest.approx(
        0.3076923076923077
    )
    stats = panel_agreement(["a", "b", "c"], PAIR_CASES)
    assert stats.outcomes and [r.passes for r in stats.rates] == [3, 1, 2]  # wins
    assert stats.split_cases == 3


def test_a_pairwise_panel_record_splits_on_different_outcomes() -> None:
    from pytest_llmjudge.gating.panel import pair_decision, pair_split

    assert pair_split(["win", "tie", None]) and not pair_split(["tie", "inconsistent", None])
    assert [pair_decision(o) for o in ("win", "tie", "loss", "inconsistent", None)] == [
        "pass",
        "pass",
        "fail",
        "uncertain",
        "error",
    ]
