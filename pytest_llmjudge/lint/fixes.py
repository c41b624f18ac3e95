"""Applying fixes to a file's text: line edits, bottom-up, never two that touch the same lines."""

from __future__ import annotations

from collections.abc import Sequence

from ..suite.prompt_file import split_lines
from .diagnostics import Edit, Fix


def _slots(edit: Edit) -> tuple[int, int]:
    """The span an edit occupies: line n is slot 2n, the gap before it slot 2n - 1."""
    if edit.end < edit.start:
        return 2 * edit.start - 1, 2 * edit.start - 1
    return 2 * edit.start, 2 * edit.end


def apply_fixes(text: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix]]:
    """``text`` with every fix applied that does not overlap an earlier one, and those fixes.

    Line endings (LF or CRLF) and the final newline are kept as they were.
    """
    taken: list[tuple[int, int]] = []
    applied: list[Fix] = []
    for fix in sorted(fixes, key=lambda f: min((e.start for e in f.edits), default=0)):
        spans = [_slots(e) for e in fix.edits]
        clash = any(a <= d and c <= b for a, b in spans for c, d in taken)
        inner = any(a <= d and c <= b for i, (a, b) in enumerate(spans) for c, d in spans[i + 1 :])
        if fix.edits and not clash and not inner:
            taken.extend(spans)
            applied.append(fix)
    if not applied:
        return text, []
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = split_lines(text)
    edits = sorted(
        (e for f in applied for e in f.edits), key=lambda e: (e.start, e.end >= e.start), reverse=True
    )
    for edit in edits:
        lines[edit.start - 1 : max(edit.end, edit.start - 1)] = list(edit.lines)
    return newline.join(lines), applied
