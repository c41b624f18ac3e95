"""A judge or model call that gave no answer, and whether a retry can help."""

from __future__ import annotations

from dataclasses import dataclass

from ..cost.usage import Usage


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


class CarriedFailure(Exception):
    """A ``JudgeFailure`` on its way through code that sets ``__traceback__`` on what it raises
    (pydantic-ai's agent run, asyncio), which a frozen dataclass refuses; ``classify`` unwraps it."""

    def __init__(self, failure: JudgeFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure
