"""LJ012 empty-section."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..documents import PromptDocument
from ..rule import PromptRule
from ..sections import TITLES, forms

_LISTS = ("include", "ignore", "automatic_fail", "pass_conditions", "acceptable_variations")
_TEXTS = ("behavior", "description", "uncertainty_policy")


class EmptySection(PromptRule):
    """
    ## What it does
    Finds a section heading with nothing under it: an "Automatic fail" header with no
    bullets, "Pass conditions" with no numbered conditions, an empty Include, Ignore or
    "Acceptable variations" list, or an empty BEHAVIOR, DESCRIPTION or "Uncertainty policy".

    ## Why is this bad?
    An empty "Automatic fail if any of the following are true:" still tells the judge that
    failure triggers exist; the model invents them. Empty headings usually mean a section
    was cut while editing, and the prompt no longer says what its author meant.

    ## Example
    ```markdown
    Automatic fail if any of the following are true:

    Pass conditions (all must be satisfied):
    1. Every administered medication appears in the output.
    ```

    ## Use instead
    ```markdown
    Automatic fail if any of the following are true:
    - Any administered medication in the ground truth is missing from the output.

    Pass conditions (all must be satisfied):
    1. Every administered medication appears in the output.
    ```
    """

    code = "LJ012"
    name = "empty-section"
    severity = Severity.ERROR
    summary = "A section heading has nothing under it"

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        sections = prompt.sections
        values: dict[str, object] = {
            "include": sections.include,
            "ignore": sections.ignore,
            "automatic_fail": sections.automatic_fail,
            "pass_conditions": sections.pass_conditions,
            "acceptable_variations": sections.acceptable_variations,
            "behavior": sections.behavior,
            "description": sections.description,
            "uncertainty_policy": sections.uncertainty_policy,
        }
        reported: set[str] = set()
        for heading in sections.headings:
            key = heading.key
            if key in (*_LISTS, *_TEXTS) and not values[key] and key not in reported:
                reported.add(key)
                message = f"section {TITLES[key]} is empty: write its text under {forms(key)}"
                yield self.diagnostic(prompt.display, heading.line, 1, message)
