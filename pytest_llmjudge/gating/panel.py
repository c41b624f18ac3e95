"""A panel's vote: the verdicts of its members on one case become the case's verdict.

Pure: each member's verdict is reduced from its own samples first (``gating.repeats``); here a
member is a pass, a fail, or None when it could not answer (an ERROR of that member).

- ``majority``: more members pass than fail → pass; more fail → fail; an even split is
  ``uncertain``, which fails the case and sends it to review.
- ``unanimous``: every member that answered passes.
- ``any``: one member that answered passes.

Fewer than ``min_members`` answers make the case an ERROR, whatever the rule: a verdict from too
few judges is not the panel's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Decision = Literal["pass", "fail", "uncertain", "error"]
RULES = ("majority", "unanimous", "any")


@dataclass(frozen=True)
class MemberVerdict:
    """One member's verdict on a case; ``passed`` None: it errored (``error`` says how)."""

    member: str
    passed: bool | None
    reason: str = ""
    error: str | None = None
    cached: bool = False


@dataclass(frozen=True)
class PanelVote:
    """What the panel decided on one case, and how its members split."""

    decision: Decision
    rule: str
    passes: int
    fails: int
    errors: int
    min_members: int

    @property
    def answered(self) -> int:
        return self.passes + self.fails

    @property
    def passed(self) -> bool:
        return self.decision == "pass"

    @property
    def split(self) -> bool:
        """The members that answered disagree: the case goes to human review."""
        return self.passes > 0 and self.fails > 0

    def summary(self) -> str:
        """``2 of 3 judges pass (majority)``, with the members that errored."""
        errored = f", {self.errors} errored" if self.errors else ""
        return f"{self.passes} of {self.answered} judges pass ({self.rule}{errored})"


def vote(verdicts: Sequence[bool | None], rule: str, min_members: int) -> PanelVote:
    """The panel's decision on one case from its members' verdicts (None: errored)."""
    if rule not in RULES:
        raise ValueError(f"unknown panel rule {rule!r}")
    if min_members < 1:
        raise ValueError(f"min_members must be at least 1, got {min_members}")
    passes = sum(1 for v in verdicts if v is True)
    fails = sum(1 for v in verdicts if v is False)
    errors = len(verdicts) - passes - fails
    decision: Decision
    if passes + fails < min_members:
        decision = "error"
    elif rule == "majority":
        decision = "pass" if passes > fails else "fail" if fails > passes else "uncertain"
    elif rule == "unanimous":
        decision = "pass" if fails == 0 else "fail"
    else:
        decision = "pass" if passes > 0 else "fail"
    return PanelVote(decision, rule, passes, fails, errors, min_members)


def vote_members(members: Sequence[MemberVerdict], rule: str, min_members: int) -> PanelVote:
    return vote([m.passed for m in members], rule, min_members)


def panel_reason(members: Sequence[MemberVerdict], result: PanelVote) -> str:
    """The case's reason: the vote, then each member's verdict and reason on a line of its own."""
    lines = [f"panel: {result.summary()}"]
    for member in members:
        if member.passed is None:
            lines.append(f"  {member.member}: ERROR {member.error or ''}".rstrip())
        else:
            verdict = "pass" if member.passed else "fail"
            lines.append(f"  {member.member}: {verdict}: {member.reason}".rstrip())
    return "\n".join(lines)


def pair_vote_value(outcome: str | None) -> str | None:
    """A member's pairwise outcome as its vote: ``inconsistent`` (opposite picks in the two
    orders) counts as a tie, as in the pairwise statistics."""
    return "tie" if outcome == "inconsistent" else outcome


def pair_decision(outcome: str | None) -> Decision:
    """A panel's pairwise outcome (``pipeline.panel.pair_vote``) as its decision: a loss fails,
    a win or tie passes, no majority (``inconsistent``) is uncertain, None (too few answered) an
    error."""
    if outcome is None:
        return "error"
    return "fail" if outcome == "loss" else "uncertain" if outcome == "inconsistent" else "pass"


def pair_split(outcomes: Sequence[str | None]) -> bool:
    """The members that answered name different outcomes: the case goes to human review."""
    return len({pair_vote_value(o) for o in outcomes if o is not None}) > 1


def pair_panel_reason(
    members: Sequence[tuple[str, str | None, str, str | None]], outcome: str, rule: str
) -> str:
    """A pairwise panel case's reason: the vote, then each member (model, outcome, its answers'
    reasons, error) on a line of its own."""
    answered = [o for _, o, _, _ in members if o is not None]
    counts = ", ".join(f"{answered.count(o)} {o}" for o in dict.fromkeys(answered))
    errored = len(members) - len(answered)
    lines = [
        f"{outcome}: panel ({rule}): {counts or 'no answer'}" + (f", {errored} errored" if errored else "")
    ]
    for model, own, reason, error in members:
        lines.append(
            f"  {model}: {own}: {reason}".rstrip()
            if own is not None
            else f"  {model}: ERROR {error or ''}".rstrip()
        )
    return "\n".join(lines)
