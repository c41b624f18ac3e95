"""Text as an editor shows it: lines end only at ``\\n``, ``\\r\\n`` or ``\\r``, and user text
quoted in a message cannot hide in it (control and bidirectional characters are escaped)."""

from __future__ import annotations

import bisect
import re
from typing import Any

_LINE_END = re.compile(r"\r\n?|\n")
# Characters that other line splitters (str.splitlines, YAML) also treat as line breaks.
OTHER_LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def split_lines(text: str) -> list[str]:
    """Lines of ``text``, split at ``\\n``, ``\\r\\n`` and ``\\r`` only (``str.splitlines`` also
    splits at form feeds and Unicode separators, which editors show inside a line)."""
    return _LINE_END.split(text)


class LineIndex:
    """Maps a character offset of ``text`` to the 1-based line and column an editor shows."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(m.end() for m in _LINE_END.finditer(text))]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based editor line and column of ``text[offset]``."""
    return LineIndex(text).position(offset)


def escape(text: str) -> str:
    """``text`` with every non-printable character (controls, NUL, bidirectional overrides, line
    separators) written as a Python escape such as ``\\x00`` or ``\\u202e``."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)


def _escaped(ch: str) -> str:
    code = ord(ch)
    if ch in "\t\n\r":
        return {"\t": "\\t", "\n": "\\n", "\r": "\\r"}[ch]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for a message: escaped, and cut to about ``limit`` characters."""
    if isinstance(value, str | bytes) and len(value) > limit * 4:
        value = value[: limit * 4]  # repr of a huge value is never shown whole
    elif isinstance(value, dict | list | tuple) and len(value) > limit:
        value = type(value)(list(value.items())[:limit]) if isinstance(value, dict) else value[:limit]
    text = escape(_repr(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except (ValueError, RecursionError):  # an int too long to print, a self-containing list
        return f"<{type(value).__name__}>"
