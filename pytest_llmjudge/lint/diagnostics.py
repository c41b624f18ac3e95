"""The values a lint run produces: findings, their fixes, and the edits a fix makes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How bad a finding is: an ``error`` fails ``llmjudge lint`` and the pytest lint item."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Edit:
    """Replace lines ``start``..``end`` (1-based, inclusive) with ``lines``.

    ``end == start - 1`` inserts ``lines`` before line ``start`` without removing anything.
    """

    start: int
    end: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Fix:
    """A rewrite of the file that removes a finding; ``safe`` fixes keep the prompt's meaning."""

    description: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass(frozen=True)
class Diagnostic:
    """One finding at ``path:line:col`` (1-based)."""

    code: str
    message: str
    path: str
    line: int
    col: int
    fix: Fix | None = None

    def render(self) -> str:
        """The ``path:line:col: CODE message`` line every interface prints."""
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.code)
