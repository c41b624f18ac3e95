"""Inline suppression: ``<!-- llmjudge: noqa: LJ001 -->`` in prompts, ``# llmjudge: noqa: LJ030`` in YAML.

A comment silences the codes it names (all codes when it names none) on its own line, and on
the next line when the comment stands alone on its line. ``llmjudge: noqa-file: LJ010``
anywhere in a file silences those codes in the whole file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .diagnostics import Diagnostic

_NOQA = re.compile(
    r"llmjudge:\s*noqa(?P<file>-file)?(?:\s*:\s*(?P<codes>[A-Za-z]+\d+(?:\s*,?\s*[A-Za-z]+\d+)*))?",
    re.IGNORECASE,
)
_ALONE = re.compile(r"^\s*(?:<!--.*-->|#.*)\s*$")

# None stands for "every code".
Codes = frozenset[str] | None


@dataclass(frozen=True)
class Suppressions:
    lines: Mapping[int, Codes] = field(default_factory=dict)
    whole_file: Codes = frozenset()

    def hides(self, diagnostic: Diagnostic) -> bool:
        return _covers(self.whole_file, diagnostic.code) or _covers(
            self.lines.get(diagnostic.line, frozenset()), diagnostic.code
        )


def _covers(codes: Codes, code: str) -> bool:
    return codes is None or code in codes


def _merge(a: Codes, b: Codes) -> Codes:
    return None if a is None or b is None else a | b


def parse_suppressions(lines: list[str] | tuple[str, ...]) -> Suppressions:
    by_line: dict[int, Codes] = {}
    whole: Codes = frozenset()
    for number, raw in enumerate(lines, start=1):
        for found in _NOQA.finditer(raw):
            codes: Codes = (
                frozenset(c.upper() for c in re.findall(r"[A-Za-z]+\d+", found.group("codes")))
                if found.group("codes")
                else None
            )
            if found.group("file"):
                whole = _merge(whole, codes)
                continue
            targets = (number, number + 1) if _ALONE.match(raw) else (number,)
            for target in targets:
                by_line[target] = _merge(by_line.get(target, frozenset()), codes)
    return Suppressions(by_line, whole)
