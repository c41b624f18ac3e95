"""LJ016 unplaced-text."""

from __future__ import annotations

from collections.abc import Iterable

from ...suite.prompt_syntax import PLACE_HINT
from ..diagnostics import Diagnostic, Severity
from ..documents import PromptDocument
from ..rule import PromptRule


class UnplacedText(PromptRule):
    """
    ## What it does
    Finds a line of content that no section of the prompt holds, so the judge would never see
    it: text before the first section, a Markdown heading that names no section (`## Notes`)
    and the text under it, text written directly under EVALUATION SCOPE or RUBRIC instead of in
    one of their lists, a second line under BEHAVIOR, or free text under INPUTS. Each section
    opens with a label line (`SYSTEM: ...`, `Include:`) or a Markdown heading (`# SYSTEM`,
    `### Include`). Blank lines, `---` and `<!-- comments -->` are not content.

    ## Why is this bad?
    The author believes the judge reads the line; it does not. The test run stops at collection
    on the same line, so a prompt is never judged half-read.

    ## Example
    ```markdown
    # Medication judge

    RUBRIC
    Be strict about doses.

    Pass conditions (all must be satisfied):
    1. Every administered medication appears in the output.
    ```

    ## Use instead
    ```markdown
    <!-- Medication judge -->

    RUBRIC

    Pass conditions (all must be satisfied):
    1. Every administered medication appears in the output with its ground-truth dose.
    ```
    """

    code = "LJ016"
    name = "unplaced-text"
    severity = Severity.ERROR
    summary = "A line of the prompt is in no section, so the judge never sees it"

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        headings = {h.line for h in prompt.sections.headings}  # a repeated heading is LJ013's
        for unplaced in prompt.sections.unplaced:
            if unplaced.line in headings:
                continue
            message = f"line not sent to the judge: {unplaced.reason}; {PLACE_HINT}"
            yield self.diagnostic(prompt.display, unplaced.line, 1, message)
