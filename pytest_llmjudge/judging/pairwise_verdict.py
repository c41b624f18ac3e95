"""What a pairwise judge call produced, and what a case's two answers (one per order) make of it.

A pairwise answer names a position ("A", "B") or a tie; which run's output stood there depends on
the order the request was asked in. ``outcome_of`` reads the two answers of one case from the
candidate's side (MT-Bench's swap): the same pick in both orders is a win or a loss, a pick in one
order and a tie in the other still counts as that pick, and opposite picks are ``inconsistent``
(the statistics count them as ties).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ..models.answered import Answered

Winner = Literal["A", "B", "tie"]
WINNERS: tuple[str, ...] = get_args(Winner)
PairOutcome = Literal["win", "loss", "tie", "inconsistent"]
OUTCOMES: tuple[str, ...] = get_args(PairOutcome)
_Side = Literal["candidate", "baseline", "tie"]


@dataclass(frozen=True)
class PairwiseVerdict:
    """The judge's answer to one pairwise request: the better position, or a tie."""

    winner: Winner
    reason: str
    answered: Answered | None = field(default=None, compare=False)  # the model that answered

    def to_json(self) -> dict[str, Any]:
        return {"winner": self.winner, "reason": self.reason}

    @classmethod
    def from_json(cls, data: Any) -> PairwiseVerdict:
        """A verdict from ``to_json``'s object, strictly typed: raises ``TypeError`` for anything
        else (``"winner": "a"`` is not a verdict), so an edited or damaged entry is never read."""
        if not isinstance(data, dict):
            raise TypeError("a pairwise verdict is a JSON object")
        winner, reason = data.get("winner"), data.get("reason")
        if not isinstance(winner, str) or winner not in WINNERS:
            raise TypeError('\'winner\' must be "A", "B" or "tie"')
        if not isinstance(reason, str):
            raise TypeError("'reason' must be a string")
        return cls(winner, reason)  # type: ignore[arg-type]  # checked against WINNERS above


class PairwiseAnswer(BaseModel):
    """Which output better satisfies the rubric ("A", "B" or "tie"), and why."""

    # Strict: only the exact strings count; "a", "Tie" or "C" is invalid output, retried.
    model_config = ConfigDict(strict=True)

    winner: Winner = Field(
        description='"A" or "B": the output that satisfies the rubric better; "tie": neither.'
    )
    reason: str = Field(description="50-200 characters comparing the key evidence in both outputs.")

    def to_verdict(self) -> PairwiseVerdict:
        return PairwiseVerdict(self.winner, self.reason)


def _side(winner: Winner, candidate_position: Literal["A", "B"]) -> _Side:
    if winner == "tie":
        return "tie"
    return "candidate" if winner == candidate_position else "baseline"


def outcome_of(first: PairwiseVerdict, second: PairwiseVerdict) -> PairOutcome:
    """The case's outcome for the candidate, from the answer with the candidate as A (``first``)
    and the answer with the candidate as B (``second``)."""
    sides = {_side(first.winner, "A"), _side(second.winner, "B")}
    if sides == {"candidate", "baseline"}:
        return "inconsistent"
    if "candidate" in sides:
        return "win"
    if "baseline" in sides:
        return "loss"
    return "tie"


def position_consistent(first: PairwiseVerdict, second: PairwiseVerdict) -> bool:
    """The judge gave the same answer about the outputs in both orders: it picked the same output
    twice, or called both a tie. A pick in one order and a tie in the other is not consistent
    (the outcome still counts the pick); the judge's position-consistency rate is consistent
    pairs / pairs it answered in both orders."""
    return _side(first.winner, "A") == _side(second.winner, "B")


def majority_answer(answers: Sequence[PairwiseVerdict]) -> PairwiseVerdict:
    """One order's answer from its repeated samples: the winner more than half of them named (its
    first reason), else a tie (a split between A and B, or no majority)."""
    if not answers:
        raise ValueError("no answers to reduce")
    for winner in WINNERS:
        named = [a for a in answers if a.winner == winner]
        if 2 * len(named) > len(answers):
            return named[0]
    split = ", ".join(f"{sum(a.winner == w for a in answers)} {w}" for w in WINNERS)
    return PairwiseVerdict("tie", f"no majority among {len(answers)} samples ({split})")
