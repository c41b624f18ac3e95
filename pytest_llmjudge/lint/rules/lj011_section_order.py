"""LJ011 section-order."""

from __future__ import annotations

from collections.abc import Iterable

from ...suite.prompt_file import CANONICAL_ORDER, Heading
from ..diagnostics import Diagnostic, Severity
from ..documents import PromptDocument
from ..rule import PromptRule
from ..sections import TITLES, first_headings, placement, several_behaviors


class SectionOrder(PromptRule):
    """
    ## What it does
    Checks that the sections of a prompt file come in canonical order (SYSTEM, BEHAVIOR,
    DESCRIPTION, EVALUATION SCOPE, Include, Ignore, RUBRIC, Automatic fail, Pass conditions,
    Acceptable variations, Uncertainty policy, INPUTS) and that none appears twice. The fewest
    sections that explain the disorder are reported, each with the place it belongs.

    ## Why is this bad?
    Reviewers read every prompt in the same order, diff tools line prompts up by it, and a
    section repeated further down silently extends or contradicts the first one.

    ## Example
    ```markdown
    RUBRIC
    ...
    EVALUATION SCOPE:
    Include:
    - Medications recorded as administered.
    ```

    ## Use instead
    ```markdown
    EVALUATION SCOPE:
    Include:
    - Medications recorded as administered.

    RUBRIC
    ...
    ```
    """

    code = "LJ011"
    name = "section-order"
    severity = Severity.WARNING
    summary = "Sections are out of canonical order or repeated"

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        present = first_headings(prompt)
        seen: dict[str, Heading] = {}
        repeated = () if several_behaviors(prompt) else prompt.sections.headings
        for heading in repeated:
            first = seen.setdefault(heading.key, heading)
            if first is not heading:
                message = f"section {TITLES[heading.key]} appears again (first on line {first.line})"
                yield self.diagnostic(prompt.display, heading.line, 1, message)
        ordered = [h for h in present.values() if h.key != "output_instruction"]
        keep = _longest_ordered(ordered)
        for heading in ordered:
            if heading.line not in keep:
                others = {k: h for k, h in present.items() if h.line in keep}
                where = placement(others, heading.key)
                message = f"section {TITLES[heading.key]} is out of order: it belongs {where}"
                yield self.diagnostic(prompt.display, heading.line, 1, message)


def _longest_ordered(headings: list[Heading]) -> set[int]:
    """Lines of the longest run of headings (not necessarily adjacent) already in canonical order."""
    ranks = [CANONICAL_ORDER.index(h.key) for h in headings]
    best: list[list[int]] = []
    for i, rank in enumerate(ranks):
        chains = [chain for j, chain in enumerate(best) if ranks[j] < rank]
        best.append([*max(chains, key=len, default=[]), i])
    longest = max(best, key=len, default=[])
    return {headings[i].line for i in longest}
