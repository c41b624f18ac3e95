"""Pairwise verdicts: strict JSON, the verdict tool's model, and a case's outcome from both orders."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from pytest_llmjudge.judging.pairwise_verdict import (
    OUTCOMES,
    WINNERS,
    PairwiseAnswer,
    PairwiseVerdict,
    outcome_of,
    position_consistent,
)
from pytest_llmjudge.judging.verdict import Verdict

# (answer with the candidate as A, answer with the candidate as B) → outcome for the candidate.
OUTCOME_TABLE = {
    ("A", "B"): "win",  # the candidate picked in both orders
    ("B", "A"): "loss",  # the baseline picked in both orders
    ("tie", "tie"): "tie",
    ("A", "tie"): "win",  # a pick in one order and a tie in the other counts as the pick
    ("tie", "B"): "win",
    ("B", "tie"): "loss",
    ("tie", "A"): "loss",
    ("A", "A"): "inconsistent",  # always the first position: opposite picks
    ("B", "B"): "inconsistent",  # always the second position
}


def verdict(winner: str) -> PairwiseVerdict:
    return PairwiseVerdict.from_json({"winner": winner, "reason": f"picked {winner}"})


def test_the_table_covers_every_combination() -> None:
    assert set(OUTCOME_TABLE) == set(itertools.product(WINNERS, repeat=2))
    assert set(OUTCOME_TABLE.values()) == set(OUTCOMES)


@pytest.mark.parametrize(
    ("answers", "outcome"), OUTCOME_TABLE.items(), ids=lambda v: "-".join(v) if isinstance(v, tuple) else v
)
def test_outcome_of_every_pair_of_answers(answers: tuple[str, str], outcome: str) -> None:
    first, second = answers
    assert outcome_of(verdict(first), verdict(second)) == outcome


@pytest.mark.parametrize(
    ("answers", "outcome"), OUTCOME_TABLE.items(), ids=lambda v: "-".join(v) if isinstance(v, tuple) else v
)
def test_position_consistent_only_when_both_orders_say_the_same(
    answers: tuple[str, str], outcome: str
) -> None:
    first, second = answers
    expected = answers in {("A", "B"), ("B", "A"), ("tie", "tie")}
    assert position_consistent(verdict(first), verdict(second)) is expected
    # every consistent pair has a clear outcome; a position-biased one never is a win or a loss
    assert not (expected and outcome == "inconsistent")


def test_json_round_trip() -> None:
    for winner in WINNERS:
        original = PairwiseVerdict(winner, "because")  # type: ignore[arg-type]
        assert PairwiseVerdict.from_json(original.to_json()) == original
    assert PairwiseVerdict("A", "r").to_json() == {"winner": "A", "reason": "r"}


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "A",
        {"reason": "no winner"},
        {"winner": "a", "reason": "lower case"},
        {"winner": "Tie", "reason": "capitalised"},
        {"winner": "C", "reason": "no such output"},
        {"winner": 1, "reason": "a number"},
        {"winner": True, "reason": "a boolean"},
        {"winner": ["A"], "reason": "a list"},
        {"winner": "A"},
        {"winner": "A", "reason": None},
        {"winner": "A", "reason": 3},
        {"pass": True, "reason": "a single-output verdict"},
    ],
)
def test_from_json_is_strict(data: object) -> None:
    with pytest.raises(TypeError):
        PairwiseVerdict.from_json(data)


def test_the_two_verdict_shapes_never_read_each_other() -> None:
    with pytest.raises(TypeError):
        Verdict.from_json(PairwiseVerdict("A", "r").to_json())
    with pytest.raises(TypeError):
        PairwiseVerdict.from_json(Verdict(True, "r").to_json())


def test_answer_model_accepts_exact_winners_only() -> None:
    for winner in WINNERS:
        answer = PairwiseAnswer.model_validate({"winner": winner, "reason": "r"})
        assert answer.to_verdict() == PairwiseVerdict(winner, "r")  # type: ignore[arg-type]
    for bad in [
        {"winner": "a", "reason": "r"},
        {"winner": "C", "reason": "r"},
        {"winner": "A", "reason": 5},
        {"winner": "A"},
    ]:
        with pytest.raises(ValidationError):
            PairwiseAnswer.model_validate(bad)
    # from a tool call's JSON arguments, too
    assert PairwiseAnswer.model_validate_json('{"winner": "tie", "reason": "same"}').winner == "tie"
    with pytest.raises(ValidationError):
        PairwiseAnswer.model_validate_json('{"winner": "TIE", "reason": "same"}')


def test_answer_schema_names_the_three_answers() -> None:
    schema = PairwiseAnswer.model_json_schema()
    assert schema["required"] == ["winner", "reason"]
    assert schema["properties"]["winner"]["enum"] == ["A", "B", "tie"]
