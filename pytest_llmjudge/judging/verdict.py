"""What a judge call produced: a verdict, or the error that kept it from producing one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

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
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            passed=bool(data["pass"]),
            reason=str(data["reason"]),
            score=data.get("score"),
            confidence=data.get("confidence"),
            uncertain=bool(data.get("uncertain", False)),
            format=str(data.get("format", "")),
        )


@dataclass(frozen=True)
class JudgeFailure(Exception):
    """A judge call that gave no verdict. ``transient`` failures are worth retrying."""

    kind: str
    message: str
    transient: bool = False
    retry_after: float | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class Usage:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Outcome:
    """The end of one case's judging: a verdict or a failure, plus how it was obtained."""

    verdict: Verdict | None
    failure: JudgeFailure | None = None
    model: str = ""
    cached: bool = False
    attempts: int = 1
    usage: Usage = Usage()
