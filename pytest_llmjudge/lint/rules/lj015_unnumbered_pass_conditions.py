"""LJ015 unnumbered-pass-conditions."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..documents import PromptDocument
from ..logic import marker
from ..rule import PromptRule
from ..sections import several_behaviors


class UnnumberedPassConditions(PromptRule):
    """
    ## What it does
    Checks that "Pass conditions" is a numbered list counting 1, 2, 3 … without gaps.

    ## Why is this bad?
    Pass conditions use strict AND logic, and the verdict rule says so by number: "set
    `pass = true` only if all conditions 1–N hold". Bullets or a broken count leave N
    undefined, and reasons that cite "condition 3" point nowhere.

    ## Example
    ```markdown
    Pass conditions (all must be satisfied):
    - Every administered medication appears in the output.
    - Doses match the ground truth.
    ```

    ## Use instead
    ```markdown
    Pass conditions (all must be satisfied):
    1. Every administered medication appears in the output.
    2. Doses match the ground truth.
    ```
    The fix renumbers the list.
    """

    code = "LJ015"
    name = "unnumbered-pass-conditions"
    severity = Severity.WARNING
    summary = "Pass conditions are not a numbered list 1, 2, 3 …"
    fixable = True

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        bullets = prompt.sections.pass_conditions
        if several_behaviors(prompt):
            return
        wrong = [b for i, b in enumerate(bullets, start=1) if b.number != i]
        if not wrong:
            return
        fix = None
        markers = [marker(prompt.line(b.line)) for b in bullets]
        if all(markers):
            edits = []
            for i, (bullet, lead) in enumerate(zip(bullets, markers, strict=True), start=1):
                raw = prompt.line(bullet.line)
                indent = lead[: len(lead) - len(lead.lstrip())]
                edits.append(Edit(bullet.line, bullet.line, (f"{indent}{i}. {raw[len(lead) :]}",)))
            fix = Fix("number the pass conditions 1, 2, 3 …", tuple(edits))
        first = wrong[0]
        got = "a bullet" if first.number is None else f"number {first.number}"
        position = bullets.index(first) + 1
        message = f"pass condition {position} is {got}: number the pass conditions 1, 2, 3 …"
        yield self.diagnostic(prompt.display, first.line, 1, message, fix)
