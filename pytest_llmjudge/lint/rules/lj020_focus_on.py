"""LJ020 focus-on."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..documents import PromptDocument, is_bullet_start
from ..logic import marker
from ..rule import PromptRule
from ..sections import first_headings, section_end

_FOCUS = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?focus on\s*:?(?:\*\*)?\s*(?P<rest>.*)$", re.IGNORECASE)


class FocusOn(PromptRule):
    """
    ## What it does
    Finds the legacy "Focus on:" list that older prompts use instead of EVALUATION SCOPE.

    ## Why is this bad?
    "Focus on" says what to look at but not what to ignore, and it sits outside the canonical
    structure, so the compiled rubric drops it or places it where the judge reads it as a
    pass condition. The migration note of the prompt spec converts it to EVALUATION SCOPE.

    ## Example
    ```markdown
    Focus on:
    - Medications recorded as administered.
    - Dose and route of each medication.
    ```

    ## Use instead
    ```markdown
    EVALUATION SCOPE:
    Include:
    - Medications recorded as administered.
    - Dose and route of each medication.
    Ignore:
    - Ordering and formatting differences.
    ```
    The fix moves the items into the Include list (creating EVALUATION SCOPE if needed); the
    Ignore list is yours to write.
    """

    code = "LJ020"
    name = "focus-on"
    severity = Severity.WARNING
    summary = "Legacy 'Focus on:' list instead of EVALUATION SCOPE"
    fixable = True

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        for number, raw in enumerate(prompt.lines, start=1):
            found = _FOCUS.match(raw)
            if found:
                end, items = _block(prompt, number, found.group("rest").strip())
                message = "legacy 'Focus on:' list: move its items to EVALUATION SCOPE, Include"
                yield self.diagnostic(prompt.display, number, 1, message, _fix(prompt, number, end, items))


def _block(prompt: PromptDocument, start: int, rest: str) -> tuple[int, list[str]]:
    """Last line of the Focus-on block and its items as bullet lines."""
    items = [f"- {rest[0].upper()}{rest[1:]}"] if rest else []
    end = start
    for number in range(start + 1, len(prompt.lines) + 1):
        raw = prompt.line(number)
        if is_bullet_start(raw):
            items.append("- " + raw[len(marker(raw)) :].strip() if not raw[:1].isspace() else raw.rstrip())
        elif raw.strip() and raw[:1].isspace() and items:
            items.append(raw.rstrip())
        else:
            break
        end = number
    return end, items


def _fix(prompt: PromptDocument, start: int, end: int, items: list[str]) -> Fix | None:
    if not items:
        return None
    present = first_headings(prompt)
    if (
        end < len(prompt.lines)
        and not prompt.line(end + 1).strip()
        and start > 1
        and not prompt.line(start - 1).strip()
    ):
        end += 1  # take one of the two blank lines around the block with it
    remove = Edit(start, end, ())
    if "include" in present:
        after = section_end(prompt, present["include"])
        if start <= after <= end or present["include"].line in range(start, end + 1):
            return None
        return Fix("move the items to Include", (remove, Edit(after + 1, after, tuple(items))))
    if "scope" in present:
        line = present["scope"].line
        if start <= line <= end:
            return None
        return Fix("move the items to Include", (remove, Edit(line + 1, line, ("Include:", *items))))
    return Fix(
        "rewrite as EVALUATION SCOPE, Include",
        (Edit(start, end, ("EVALUATION SCOPE:", "Include:", *items, "")),),
    )
