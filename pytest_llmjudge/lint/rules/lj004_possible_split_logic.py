"""LJ004 possible-split-logic."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..documents import PromptDocument
from ..rule import PromptRule
from .lj001_split_and_logic import join_fix, split_message, splits


class PossibleSplitLogic(PromptRule):
    """
    ## What it does
    Opt-in: it runs only when selected by its code or name (`--select LJ004`), not by a
    prefix or `ALL`. Reports "Automatic fail" bullets that *may* be fragments of one condition,
    on evidence too weak for LJ001: a bullet that starts with "or", "also" or "then"; a bullet
    whose predecessor ends on ";" or "or" (unless every bullet ends on ";"); "this protocol"
    or "these steps" when no bullet names a protocol or steps; "these medications" naming
    another bullet's medications when both bullets are failures of their own. Bullets that
    LJ001 reports are left out.

    ## Why is this bad?
    If the bullets are one condition, the judge fails every case that meets only part of it
    (see LJ001). Often they are not: a list whose items end on ";" or one that names "this
    protocol" from the description is fine. Read each finding, then join the bullets or
    suppress the finding with `<!-- llmjudge: noqa: LJ004 -->`.

    ## Example
    ```markdown
    Automatic fail if any of the following are true:
    - The output lists a medication under the wrong heading;
    - The output lists the medication twice.
    ```

    ## Use instead
    ```markdown
    Automatic fail if any of the following are true:
    - The output lists a medication under the wrong heading.
    - The output lists a medication twice.
    ```
    or, if only both together fail the case, one bullet joined with explicit AND.
    The fix (unsafe, applied with `--unsafe-fixes`) joins the bullets with explicit AND, as
    LJ001's does.
    """

    code = "LJ004"
    name = "possible-split-logic"
    severity = Severity.WARNING
    summary = "Automatic-fail bullets may be one condition split across bullets (weaker evidence than LJ001)"
    fixable = True
    opt_in = True

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        for split, members in splits(prompt, strong=False):
            yield self.diagnostic(
                prompt.display,
                members[0].line,
                1,
                split_message(split, members, weak=True),
                join_fix(prompt, members),
            )
