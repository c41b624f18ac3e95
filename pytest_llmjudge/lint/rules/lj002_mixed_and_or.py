"""LJ002 mixed-and-or."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..documents import PromptDocument
from ..logic import bullet_text, conjunctions
from ..rule import PromptRule


class MixedAndOr(PromptRule):
    """
    ## What it does
    Finds an "Automatic fail" or "Pass conditions" bullet that joins conditions with both AND
    and OR (upper-case operators, or lower-case "and"/"or" between two whole clauses) with no
    grouping: no parentheses, no "either … or", no "both … and".

    ## Why is this bad?
    "A AND B OR C" reads as "(A AND B) OR C" or as "A AND (B OR C)". The judge picks one
    reading, the author meant the other, and the verdicts drift without any visible error.

    ## Example
    ```markdown
    - Field is blank AND narrative states the value OR output invents a value.
    ```

    ## Use instead
    ```markdown
    - Field is blank AND narrative states the value.
    - Output invents a value.
    ```
    or group explicitly: `- Field is blank AND (narrative states the value OR output invents one).`
    """

    code = "LJ002"
    name = "mixed-and-or"
    severity = Severity.ERROR
    summary = "AND and OR are mixed in one bullet without grouping"

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        sections = prompt.sections
        for bullet in (*sections.automatic_fail, *sections.pass_conditions):
            text = bullet_text(prompt, bullet)
            free = [c for c in conjunctions(text.text) if not c.grouped]
            ands = [c for c in free if c.word == "and"]
            ors = [c for c in free if c.word == "or"]
            if ands and ors:
                first = min(ands[0], ors[0], key=lambda c: c.offset)
                line, col = text.position(first.offset)
                message = (
                    "bullet mixes AND and OR without grouping, so it can be read two ways: "
                    "split it into separate bullets or group one side in parentheses"
                )
                yield self.diagnostic(prompt.display, line, col, message)
