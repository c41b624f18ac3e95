"""LJ021 note-clause."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..documents import PromptDocument
from ..rule import PromptRule
from ..sections import first_headings, section_end

_NOTE = re.compile(r"\(\s*note\s*:\s*(?P<body>[^()]*?)\s*\)", re.IGNORECASE)
_OPEN = re.compile(r"\(\s*note\s*:", re.IGNORECASE)
_LEAD = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*")
_HEADER = "Acceptable variations (still treated as pass):"


class NoteClause(PromptRule):
    """
    ## What it does
    Finds legacy "(Note: …)" clauses inside rubric lines.

    ## Why is this bad?
    A parenthetical note inside a condition is an exception to it, buried where the judge
    weighs it against the condition it sits in. The prompt spec keeps deviations that must
    not be penalised in one place, "Acceptable variations".

    ## Example
    ```markdown
    2. Each dose matches the ground truth (Note: rounding to the nearest mg is fine).
    ```

    ## Use instead
    ```markdown
    2. Each dose matches the ground truth.

    Acceptable variations (still treated as pass):
    - Rounding to the nearest mg.
    ```
    The fix moves the note into "Acceptable variations", creating the section after the pass
    conditions if it is missing. A note that spans several lines is reported without a fix.
    """

    code = "LJ021"
    name = "note-clause"
    severity = Severity.WARNING
    summary = "Legacy '(Note: …)' clause instead of Acceptable variations"
    fixable = True

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        for number, raw in enumerate(prompt.lines, start=1):
            for opened in _OPEN.finditer(raw):
                found = _NOTE.match(raw, opened.start())
                fix = _fix(prompt, number, raw, found) if found and found.group("body") else None
                message = "legacy '(Note: …)' clause: move it to Acceptable variations"
                yield self.diagnostic(prompt.display, number, opened.start() + 1, message, fix)


def _fix(prompt: PromptDocument, number: int, raw: str, found: re.Match[str]) -> Fix | None:
    body = found.group("body").rstrip(" .")
    bullet = f"- {body[0].upper()}{body[1:]}."
    rest = raw[: found.start()].rstrip() + raw[found.end() :]
    keep = (rest,) if _LEAD.sub("", rest).strip(" .") else ()
    present = first_headings(prompt)
    if "acceptable_variations" in present:
        end = section_end(prompt, present["acceptable_variations"])
        insert = Edit(end + 1, end, (bullet,))
    elif "pass_conditions" in present:
        end = section_end(prompt, present["pass_conditions"])
        insert = Edit(end + 1, end, ("", _HEADER, bullet))
    elif "uncertainty_policy" in present:
        line = present["uncertainty_policy"].line
        insert = Edit(line, line - 1, (_HEADER, bullet, ""))
    else:
        return None
    return Fix("move the note to Acceptable variations", (Edit(number, number, keep), insert))
