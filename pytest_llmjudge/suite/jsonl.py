"""JSON Lines files (``cases_file: data/X.jsonl``): one JSON value a line, each error at its line
and column, never a traceback (deep nesting, 5,000-digit integers, control characters)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .errors import Location, SpecError
from .nesting import MAX_DEPTH, json_too_deep
from .text import shown, split_lines


def json_lines(text: str, display: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of ``text``; ``SpecError`` at the first bad one."""
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        deep = json_too_deep(line)
        if deep is not None:
            raise SpecError(
                Location(display, number, deep + 1),
                "",
                f"values nest more than {MAX_DEPTH} levels deep",
                "flatten the structure; cases need only a few levels",
            )
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise SpecError(
                Location(display, number, exc.colno),
                "",
                _json_problem(exc, number),
                "one JSON object per line",
            ) from None
        except ValueError as exc:  # an integer of 5,000 digits
            raise SpecError(
                Location(display, number, 1),
                "",
                f"invalid JSON: {str(exc).split(';')[0]}",
                "quote it as a string",
            ) from None


def _json_problem(exc: json.JSONDecodeError, number: int) -> str:
    if exc.msg.startswith("Invalid control character") and exc.pos < len(exc.doc):
        return (
            f"invalid JSON: control character {shown(exc.doc[exc.pos])} at line {number} column "
            f"{exc.colno}; inside a string write it as \\u{ord(exc.doc[exc.pos]):04x}"
        )
    return f"invalid JSON: {exc.msg}"
