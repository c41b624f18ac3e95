"""LJ003 implicit-and."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..documents import PromptDocument
from ..logic import bullet_text, conjunctions
from ..rule import PromptRule


class ImplicitAnd(PromptRule):
    """
    ## What it does
    Finds an "Automatic fail" bullet where a lower-case "and" joins two whole conditions, each
    with its own subject and verb ("the field is blank and the narrative states the value").
    An "and" inside a noun phrase ("name, dose and route") is not a condition join and is not
    flagged.

    ## Why is this bad?
    The spec asks for compound automatic-fail conditions to be written with an explicit
    upper-case AND. A lower-case "and" in a list whose header says "any of the following" is
    easy to misread, for the judge and for the next author, as two separate triggers.

    ## Example
    ```markdown
    - The field is blank and the narrative states the value.
    ```

    ## Use instead
    ```markdown
    - The field is blank AND the narrative states the value.
    ```
    The fix upper-cases the conjunction; it changes no meaning.
    """

    code = "LJ003"
    name = "implicit-and"
    severity = Severity.WARNING
    summary = "A lower-case 'and' joins two conditions in an automatic-fail bullet"
    fixable = True

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        for bullet in prompt.sections.automatic_fail:
            text = bullet_text(prompt, bullet)
            found = conjunctions(text.text)
            if any(c.word == "or" and not c.grouped for c in found):
                continue  # mixed logic is LJ002's finding; upper-casing would not resolve it
            implicit = [c for c in found if c.word == "and" and not c.explicit and not c.grouped]
            if not implicit:
                continue
            positions = [text.position(c.offset) for c in implicit]
            edits: dict[int, str] = {}
            for line, col in positions:
                raw = edits.get(line, prompt.line(line))
                edits[line] = raw[: col - 1] + "AND" + raw[col + 2 :]
            fix = Fix(
                "write the conjunction as explicit AND", tuple(Edit(n, n, (raw,)) for n, raw in edits.items())
            )
            line, col = positions[0]
            message = "lower-case 'and' joins two conditions: write it as explicit AND"
            yield self.diagnostic(prompt.display, line, col, message, fix)
