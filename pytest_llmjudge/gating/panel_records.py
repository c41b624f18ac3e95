"""What a panel case's record keeps of its members: each one's verdict, reason or error, and the
panel's decision. Plain values that travel in pytest reports (also from xdist workers) and make
the per-benchmark agreement (``gating.panel_agreement``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from .panel import pair_vote_value, vote
from .panel_agreement import PanelAgreement, panel_agreement

if TYPE_CHECKING:
    from ..judging.verdict import Outcome


@dataclass(frozen=True)
class MemberRecord:
    """One member's verdict on a case (its samples reduced); ``passed`` None: it errored."""

    model: str
    passed: bool | None
    reason: str = ""
    error: str | None = None
    cached: bool = False
    samples: int = 1
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0  # of its calls in this run; None: its model has no known price
    outcome: str | None = None  # pairwise: the candidate's win, loss, tie or inconsistent by this member
    # the snapshot and fingerprint that answered each of its samples (those the provider named)
    answered: tuple[tuple[str, str | None], ...] = ()

    def identities(self) -> tuple[tuple[str, str | None], ...]:
        """``answered`` as pairs, also after a trip through an xdist worker (lists then)."""
        return tuple((str(pair[0]), None if pair[1] is None else str(pair[1])) for pair in self.answered)

    def to_results(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "pass": self.passed,
            "reason": self.reason,
            "error": self.error,
            "cached": self.cached,
            "samples": self.samples,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "outcome": self.outcome,
        }


@dataclass(frozen=True)
class PanelRecord:
    """How a panel decided a case: its rule, the least answers needed, the decision (pass, fail,
    uncertain, error), whether the members split, and each member's verdict."""

    rule: str
    min_members: int
    decision: str
    split: bool
    members: tuple[MemberRecord, ...] = ()

    def unpriced(self) -> list[str]:
        """The members whose calls have no known price."""
        return [m.model for m in self.members if m.cost_usd is None]

    def to_results(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "min_members": self.min_members,
            "decision": self.decision,
            "split": self.split,
            "members": [m.to_results() for m in self.members],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PanelRecord:
        """The record of ``dataclasses.asdict``'s form (as it arrives from an xdist worker)."""
        names = {f.name for f in fields(MemberRecord)}
        members = tuple(
            m if isinstance(m, MemberRecord) else MemberRecord(**{k: v for k, v in m.items() if k in names})
            for m in data.get("members", ())
        )
        return cls(data["rule"], data["min_members"], data["decision"], data["split"], members)


def panel_record(outcome: Outcome, rule: str, min_members: int) -> PanelRecord:
    """The panel record of a panel case's outcome (its ``members``)."""
    members = tuple(_member(o) for o in outcome.members)
    result = vote([m.passed for m in members], rule, min_members)
    return PanelRecord(rule, min_members, result.decision, result.split, members)


def _member(outcome: Outcome) -> MemberRecord:
    verdict = outcome.verdict
    return MemberRecord(
        outcome.model,
        None if verdict is None else verdict.effective_pass,
        verdict.reason if verdict is not None else "",
        str(outcome.failure) if outcome.failure is not None else None,
        outcome.cached,
        len(outcome.samples) or 1,
        outcome.usage.input_tokens,
        outcome.usage.output_tokens,
        None if (spent := outcome.usage.spent) is None else float(spent),
        answered=tuple(
            (v.answered.model, v.answered.fingerprint)
            for sample in outcome.samples or (outcome,)
            if (v := sample.verdict) is not None and v.answered is not None
        ),
    )


@dataclass(frozen=True)
class MemberCalibration:
    """One member against human labels: TPR over the human-pass cases it answered, TNR over the
    human-fail ones (None without any)."""

    model: str
    labelled: int
    tpr: float | None
    tnr: float | None


def member_calibration(labelled: Sequence[tuple[PanelRecord, str]]) -> list[MemberCalibration]:
    """Each member's agreement with the human label of each labelled case (``pass`` or ``fail``),
    so a weak member of a panel shows."""
    names: list[str] = []
    for record, _ in labelled:
        names += [m.model for m in record.members if m.model not in names]
    found = []
    for name in names:
        votes = [
            (m.passed, label)
            for record, label in labelled
            for m in record.members
            if m.model == name and m.passed is not None
        ]
        positives = [passed for passed, label in votes if label == "pass"]
        negatives = [not passed for passed, label in votes if label == "fail"]
        tpr = sum(positives) / len(positives) if positives else None
        tnr = sum(negatives) / len(negatives) if negatives else None
        found.append(MemberCalibration(name, len(votes), tpr, tnr))
    return found


def benchmark_agreement(panels: Iterable[PanelRecord]) -> PanelAgreement | None:
    """The agreement of a benchmark's panel over its cases' records; None without any. Members are
    told apart by model, in the order the cases name them."""
    records = list(panels)
    if not records:
        return None
    names: list[str] = []
    for record in records:
        names += [m.model for m in record.members if m.model not in names]
    votes: list[Sequence[bool | str | None]] = []
    for record in records:  # pairwise: each member's outcome, an inconsistent pair a tie
        by_model = {
            m.model: m.passed if m.outcome is None else pair_vote_value(m.outcome) for m in record.members
        }
        votes.append([by_model.get(name) for name in names])
    return panel_agreement(names, votes)
