"""What a judge prompt file must hold, and how each section is written.

A prompt is never half-read: a required section that is missing or empty, and a line of content
that no section holds (``PromptSections.unplaced``), stop the run at collection with the file and
line, and the message shows the accepted forms of a heading. ``llmjudge lint`` reports the same
lines (LJ016) and the recommended sections (LJ010).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import Location, SpecError
from .prompt_file import CANONICAL_ORDER, PromptSections

# The two accepted forms of each section heading: a label line (its colon optional when the name
# stands alone in capitals), or a Markdown heading (``#`` to ``###``, colon optional); the text
# follows on the same line after a colon, or on the lines below.
FORMS = {
    "system": ("SYSTEM: <instructions>", "# SYSTEM"),
    "behavior": ("BEHAVIOR: <behavior id>", "## BEHAVIOR"),
    "description": ("DESCRIPTION:", "## DESCRIPTION"),
    "scope": ("EVALUATION SCOPE:", "## EVALUATION SCOPE"),
    "include": ("Include:", "### Include"),
    "ignore": ("Ignore:", "### Ignore"),
    "rubric": ("RUBRIC", "## RUBRIC"),
    "automatic_fail": ("Automatic fail if any of the following are true:", "### Automatic fail"),
    "pass_conditions": ("Pass conditions (all must be satisfied):", "### Pass conditions"),
    "acceptable_variations": ("Acceptable variations (still treated as pass):", "### Acceptable variations"),
    "uncertainty_policy": ("Uncertainty policy:", "### Uncertainty policy"),
    "inputs": ("INPUTS", "## INPUTS"),
    "output_instruction": ("Respond only with JSON: ...", "## OUTPUT"),
}
TITLES = {
    "system": "SYSTEM",
    "behavior": "BEHAVIOR",
    "description": "DESCRIPTION",
    "scope": "EVALUATION SCOPE",
    "include": "Include",
    "ignore": "Ignore",
    "rubric": "RUBRIC",
    "automatic_fail": "Automatic fail",
    "pass_conditions": "Pass conditions",
    "acceptable_variations": "Acceptable variations",
    "uncertainty_policy": "Uncertainty policy",
    "inputs": "INPUTS",
    "output_instruction": "output instruction",
}
# Without these the judge gets no instructions, no question or no rubric: the run stops.
REQUIRED = ("system", "description")
RUBRIC_LISTS = ("automatic_fail", "pass_conditions")  # at least one of them
_SECTION_LIST = (
    "SYSTEM, BEHAVIOR, DESCRIPTION, EVALUATION SCOPE (Include, Ignore), RUBRIC (Automatic fail, "
    "Pass conditions, Acceptable variations, Uncertainty policy), INPUTS"
)
REQUIRED_HINT = (
    "a judge prompt needs SYSTEM, DESCRIPTION (or a 'concept:' in its benchmark), and Pass "
    "conditions or Automatic fail under RUBRIC (see 'Writing a judge prompt' in the README)"
)
PLACE_HINT = (
    f"start each section with its heading, such as `SYSTEM: ...` or `# SYSTEM`; the sections are "
    f"{_SECTION_LIST}; or make the line a <!-- comment -->"
)


def forms(key: str) -> str:
    """The accepted heading forms of section ``key``, as messages show them."""
    label, heading = FORMS[key]
    return f"`{label}` or `{heading}`"


@dataclass(frozen=True)
class Problem:
    """One reason a prompt file cannot be compiled as written."""

    line: int
    field: str
    message: str
    hint: str


def _quote(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:59] + "…")


def _missing(sections: PromptSections, key: str) -> Problem:
    """``key`` is absent or empty: reported at its heading, or where it belongs."""
    heading = sections.heading(key)
    if heading is not None:
        return Problem(
            heading.line, TITLES[key], f"section {TITLES[key]} is empty", f"write it under {forms(key)}"
        )
    rank = CANONICAL_ORDER.index(key)
    later = [h.line for h in sections.headings if CANONICAL_ORDER.index(h.key) > rank]
    line = min(later) if later else max((h.line for h in sections.headings), default=1)
    message = f"missing section {TITLES[key]}, written {forms(key)}"
    return Problem(line, TITLES[key], message, REQUIRED_HINT)


def problems(sections: PromptSections) -> list[Problem]:
    """Everything that keeps ``sections`` from reaching the judge whole, in file order."""
    found = [
        Problem(u.line, "prompt", f"line not sent to the judge, {u.reason}: {_quote(u.text)}", PLACE_HINT)
        for u in sections.unplaced
    ]
    values = {"system": sections.system, "description": sections.description}
    found += [_missing(sections, key) for key in REQUIRED if not values[key].strip()]
    if not (sections.automatic_fail or sections.pass_conditions):
        problem = _missing(sections, "pass_conditions")
        message = (
            f"{problem.message}; the rubric needs Pass conditions or Automatic fail "
            f"({forms('automatic_fail')})"
        )
        found.append(Problem(problem.line, "RUBRIC", message, problem.hint))
    return sorted(found, key=lambda p: p.line)


def check_prompt(sections: PromptSections) -> None:
    """Raise ``SpecError`` at the first problem of ``sections`` (naming how many more there are)."""
    found = problems(sections)
    if not found:
        return
    first = found[0]
    message = first.message
    if len(found) > 1:
        more = ", ".join(str(p.line) for p in found[1:6]) + (", …" if len(found) > 6 else "")
        message += f" (and {len(found) - 1} more, at line {more})"
    raise SpecError(Location(sections.path, first.line, 1), first.field, message, first.hint)
