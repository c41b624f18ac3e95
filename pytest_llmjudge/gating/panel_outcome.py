"""A panel case's one outcome from its members' samples: each member's samples reduce to its
verdict (``judge.reduce``, as a single judge's do), then the panel votes (``gating.panel``).

The outcome's ``members`` keep each member's outcome for the failure text, the records and the
reports; its usage, attempts and latency add up every member's calls, so cost and budget count
them all. Its ``model`` names the rule, the least number of answers and every member, so the
judge fingerprint a calibration is stored under covers the whole panel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..pipeline.panel import panel_label, too_few_answered
from .panel import MemberVerdict, panel_reason, vote_members
from .repeats import combine_outcomes

__all__ = ["combine_panel", "member_verdict", "panel_label"]

if TYPE_CHECKING:
    from ..judging.verdict import Outcome
    from ..suite.files import Benchmark
    from ..suite.settings import RunSettings


def member_verdict(outcome: Outcome) -> MemberVerdict:
    verdict = outcome.verdict
    return MemberVerdict(
        outcome.model,
        None if verdict is None else verdict.effective_pass,
        verdict.reason if verdict is not None else "",
        str(outcome.failure) if outcome.failure is not None else None,
        outcome.cached,
    )


def combine_panel(
    benchmark: Benchmark,
    members: Sequence[Sequence[Outcome]],
    rule: str,
    min_members: int,
    settings: RunSettings,
) -> Outcome:
    """The case's outcome from each member's samples (in the panel's order)."""
    from ..judging.verdict import JudgeFailure, Outcome, Verdict, total_usage

    reduced = tuple(
        combine_outcomes(benchmark, list(samples), settings) if len(samples) > 1 else samples[0]
        for samples in members
    )
    votes = [member_verdict(o) for o in reduced]
    result = vote_members(votes, rule, min_members)
    latencies = [o.latency for o in reduced if o.latency is not None]
    combined = Outcome(
        None,
        None,
        panel_label(rule, min_members, [o.model for o in reduced]),
        all(o.cached for o in reduced),
        _attempts(reduced),
        total_usage(o.usage for o in reduced),
        sum(latencies) if latencies else None,
        retried=tuple(kind for o in reduced for kind in o.retried),
        members=reduced,
    )
    if result.decision == "error":
        failed = [o for o in reduced if o.failure is not None]
        kind = failed[0].failure.kind if failed and failed[0].failure else "judge-error"
        errors = [(o.model, str(o.failure)) for o in failed]
        message = too_few_answered(result.answered, len(reduced), min_members, errors)
        return replace(combined, failure=JudgeFailure(kind, message))
    verdict = Verdict(
        passed=result.decision == "pass",
        reason=panel_reason(votes, result),
        uncertain=result.decision == "uncertain",
    )
    return replace(combined, verdict=verdict)


def _attempts(members: Sequence[Outcome]) -> int:
    """As for a case judged in samples: one, plus every member call's retries (0 if all cached),
    so that the run's count of calls (attempts beyond the first, plus requests) counts each call."""
    if not any(o.attempts for o in members):
        return 0
    return 1 + sum(max(o.attempts - 1, 0) for o in members)
