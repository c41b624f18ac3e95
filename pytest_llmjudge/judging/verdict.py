"""What a judge call produced: a verdict, or the error that kept it from producing one."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from ..cost.usage import Usage as Usage
from ..cost.usage import total_usage as total_usage
from ..models.answered import Answered
from ..models.failure import JudgeFailure as JudgeFailure

if TYPE_CHECKING:
    from .pairwise_verdict import PairwiseVerdict

Confidence = Literal["high", "medium", "low"]


@dataclass(frozen=True)
class Verdict:
    """The judge's answer for one case (BENCHMARK_FORMAT's judge output)."""

    passed: bool
    reason: str
    score: float | None = None
    confidence: Confidence | None = None
    uncertain: bool = False
    format: str = ""  # how a text answer was read (json, fenced_json, yaml, …); "" for structured output
    # the model that answered (its resolved snapshot and fingerprint); kept beside the verdict in the
    # cache, not in its JSON, and not part of what the verdict says
    answered: Answered | None = field(default=None, compare=False)

    @property
    def effective_pass(self) -> bool:
        """``uncertain: true`` implies failure whatever ``pass`` says."""
        return self.passed and not self.uncertain

    def to_json(self) -> dict[str, Any]:
        return {
            "pass": self.passed,
            "reason": self.reason,
            "score": self.score,
            "confidence": self.confidence,
            "uncertain": self.uncertain,
            "format": self.format,
        }

    @classmethod
    def from_json(cls, data: Any) -> Verdict:
        """A verdict from ``to_json``'s object, strictly typed: raises ``TypeError`` for anything
        else (``"pass": "false"`` is not a verdict), so an edited or damaged entry is never read."""
        if not isinstance(data, dict):
            raise TypeError("a verdict is a JSON object")
        passed, reason, score = data.get("pass"), data.get("reason"), data.get("score")
        confidence, uncertain, form = (
            data.get("confidence"),
            data.get("uncertain", False),
            data.get("format", ""),
        )
        if not isinstance(passed, bool) or not isinstance(uncertain, bool):
            raise TypeError("'pass' and 'uncertain' must be true or false")
        if not isinstance(reason, str) or not isinstance(form, str):
            raise TypeError("'reason' and 'format' must be strings")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise TypeError("'score' must be a number or null")
        if confidence not in (None, "high", "medium", "low"):
            raise TypeError("'confidence' must be high, medium, low or null")
        return cls(passed, reason, None if score is None else float(score), confidence, uncertain, form)


@dataclass(frozen=True)
class Outcome:
    """The end of one case's judging: a verdict or a failure, plus how it was obtained."""

    verdict: Verdict | None
    failure: JudgeFailure | None = None
    model: str = ""
    cached: bool = False
    attempts: int = 1
    usage: Usage = Usage()  # noqa: RUF009 (frozen: one shared empty usage is safe)
    latency: float | None = None  # seconds the judge calls took (None from the cache or checks)
    samples: tuple[Outcome, ...] = ()  # every sample of a case judged more than once
    retried: tuple[str, ...] = ()  # the failure kind of each attempt that was retried
    saved: Decimal | None = None  # a cache hit: its stored tokens at today's price (None: not known)
    pairwise: PairwiseVerdict | None = None  # a pairwise request's answer (``verdict`` is None then)
    model_latency: float | None = None  # seconds the server said it spent (None: it did not say)
    members: tuple[Outcome, ...] = ()  # a panel's case: each member's outcome, its samples reduced
