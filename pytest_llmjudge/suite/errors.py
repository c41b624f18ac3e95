"""User-facing errors: every one reads ``path:line:col: field: message`` plus a one-line hint."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .text import escape


@dataclass(frozen=True)
class Location:
    """A place in a file; line and column are 1-based (0 when unknown)."""

    path: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return f"{escape(self.path)}:{self.line}:{self.col}"


class SpecError(Exception):
    """A mistake in a user's benchmark, rubric, case or prompt file."""

    def __init__(self, location: Location, field: str, message: str, hint: str = "") -> None:
        # User text quoted in any part cannot break the one-line format or hide in the terminal.
        self.location = location
        self.field = escape(field) if len(field) <= 120 else escape(field[:119]) + "…"
        self.message = escape(message)
        self.hint = escape(hint)
        super().__init__(self.render())

    def render(self) -> str:
        head = f"{self.location}: {self.field or '<file>'}: {self.message}"
        return f"{head}\n  hint: {self.hint}" if self.hint else head


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The closest of ``choices`` to ``word``, if any is close enough to be a likely typo; a choice
    with the same letters (two swapped: ``modle`` for ``model``) before one of equal similarity."""
    found = difflib.get_close_matches(word, sorted(choices), n=3, cutoff=0.6)
    same_letters = [choice for choice in found if sorted(choice) == sorted(word)]
    ranked = same_letters or found
    return ranked[0] if ranked else None


def display_path(path: Path, root: Path) -> str:
    """``path`` as errors show it: relative to the repository root when it lies below it."""
    # os.path.realpath, unlike Path.resolve, does not raise on a symlink loop
    try:
        return Path(os.path.realpath(path)).relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        return str(path)
