"""What a judge call produced: a verdict, or the error that kept it from producing one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

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
class JudgeFailure(Exception):
    """A judge call that gave no verdict. ``transient`` failures are worth retrying."""

    kind: str
    message: str
    transient: bool = False
    retry_after: float | None = None
    usage: Usage | None = None  # what a failed attempt used, when its responses said (it is billed)

    def __post_init__(self) -> None:
        # every failure message can reach the terminal, JUnit and the results files: no secrets
        from .redact import redact

        object.__setattr__(self, "message", redact(self.message))

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class Usage:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # cost: priced where the call is made, each response on its own (judging.pricing)
    cached_input_tokens: int = 0  # of ``input_tokens``, read from the provider's prompt cache
    cost: Decimal | None = None  # USD, set where the call is priced; see ``spent``
    request_chars: int = 0  # characters of the request text sent (``llmjudge.sent_text``); 0: unknown
    # responses whose usage the server did not report (estimated from characters, ``spending``), and
    # those that reported more tokens than any model's context holds (counted as reported)
    estimated: int = 0
    implausible: int = 0

    @property
    def spent(self) -> Decimal | None:
        """USD of these calls: 0 when nothing was used, None when tokens went unpriced (a model
        with no known price, or a call no one priced)."""
        if self.cost is not None:
            return self.cost
        used = self.requests or self.input_tokens or self.output_tokens
        return None if used else Decimal(0)

    def plus(self, other: Usage) -> Usage:
        """Both calls' usage: counts and costs added (an unknown cost makes the sum unknown)."""
        mine, theirs = self.spent, other.spent
        cost = None if mine is None or theirs is None else mine + theirs
        return Usage(
            self.requests + other.requests,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            None if self.cost is None and other.cost is None else cost,
            self.request_chars or other.request_chars,
            self.estimated + other.estimated,
            self.implausible + other.implausible,
        )


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The usage of several calls (a case's samples, a call's attempts)."""
    total = Usage()
    for usage in usages:
        total = total.plus(usage)
    return total


@dataclass(frozen=True)
class Outcome:
    """The end of one case's judging: a verdict or a failure, plus how it was obtained."""

    verdict: Verdict | None
    failure: JudgeFailure | None = None
    model: str = ""
    cached: bool = False
    attempts: int = 1
    usage: Usage = Usage()
    latency: float | None = None  # seconds the judge calls took (None from the cache or checks)
    samples: tuple[Outcome, ...] = ()  # every sample of a case judged more than once
    retried: tuple[str, ...] = ()  # the failure kind of each attempt that was retried
    saved: Decimal | None = None  # a cache hit: its stored tokens at today's price (None: not known)
    pairwise: PairwiseVerdict | None = None  # a pairwise request's answer (``verdict`` is None then)
