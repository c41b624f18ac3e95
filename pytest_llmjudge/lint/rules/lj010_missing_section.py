"""LJ010 missing-section."""

from __future__ import annotations

from collections.abc import Iterable

from ...compile.request import DEFAULT_UNCERTAINTY
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..documents import PromptDocument
from ..rule import PromptRule
from ..sections import REQUIRED, TITLES, first_headings, forms, neighbours, placement, section_end


class MissingSection(PromptRule):
    """
    ## What it does
    Checks that a prompt file has every section of the canonical structure: SYSTEM, BEHAVIOR,
    DESCRIPTION, EVALUATION SCOPE with Include and Ignore, RUBRIC, "Automatic fail",
    "Pass conditions", "Acceptable variations" and "Uncertainty policy". Each missing section
    is reported where it belongs, with the two forms its heading may take: a label line
    (`SYSTEM: ...`, `Include:`) or a Markdown heading (`# SYSTEM`, `### Include`). INPUTS is
    optional: the plugin passes the case data itself. SYSTEM, DESCRIPTION and Pass conditions
    or Automatic fail are also required by the test run, which stops at collection without them.

    ## Why is this bad?
    A judge without explicit scope, fail triggers, variations or an uncertainty policy fills
    the gaps with its own judgement, which differs between models and between runs. The
    sections are also what the compiled prompt and its snapshot are built from.

    ## Example
    ```markdown
    Pass conditions (all must be satisfied):
    1. Every administered medication appears in the output.

    Acceptable variations (still treated as pass):
    - Brand vs generic names.
    ```

    ## Use instead
    ```markdown
    Pass conditions (all must be satisfied):
    1. Every administered medication appears in the output.

    Acceptable variations (still treated as pass):
    - Brand vs generic names.

    Uncertainty policy:
    If the information is ambiguous or incomplete, set pass = false and explain that the case
    is uncertain in the reason.
    ```
    The fix adds the sections whose text is standard: the RUBRIC marker, the EVALUATION SCOPE
    heading over existing Include/Ignore lists, and the standard uncertainty policy.
    """

    code = "LJ010"
    name = "missing-section"
    severity = Severity.ERROR
    summary = "A section of the canonical prompt structure is missing"
    fixable = True

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        present = first_headings(prompt)
        for key in REQUIRED:
            if key in present:
                continue
            before, after = neighbours(present, key)
            line = present[after].line if after else len(prompt.lines)
            message = (
                f"missing section {TITLES[key]}, written {forms(key)}: it belongs {placement(present, key)}"
            )
            yield self.diagnostic(prompt.display, line, 1, message, self._fix(prompt, key, before, after))

    def _fix(self, prompt: PromptDocument, key: str, before: str | None, after: str | None) -> Fix | None:
        present = first_headings(prompt)
        if key == "rubric" and after in {"automatic_fail", "pass_conditions"}:
            return Fix(
                "add the RUBRIC marker", (Edit(present[after].line, present[after].line - 1, ("RUBRIC", "")),)
            )
        if (
            key == "scope"
            and after in {"include", "ignore"}
            and before in {"description", "behavior", "system"}
        ):
            line = present[after].line
            return Fix("add the EVALUATION SCOPE heading", (Edit(line, line - 1, ("EVALUATION SCOPE:",)),))
        if key == "uncertainty_policy" and before in {
            "automatic_fail",
            "pass_conditions",
            "acceptable_variations",
        }:
            end = section_end(prompt, present[before])
            lines = ("", "Uncertainty policy:", DEFAULT_UNCERTAINTY)
            return Fix("add the standard uncertainty policy", (Edit(end + 1, end, lines),))
        return None
