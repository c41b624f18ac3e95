"""LJ013 multiple-behaviors."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..documents import PromptDocument
from ..rule import PromptRule
from ..sections import TITLES

_ID = re.compile(r"^[A-Za-z][\w.-]*$")
_SEPARATOR = re.compile(r"\s*(?:,|/|&|\+|;|\band\b)\s*", re.IGNORECASE)


class MultipleBehaviors(PromptRule):
    """
    ## What it does
    Finds a prompt that evaluates more than one behavior: several BEHAVIOR headings, a
    BEHAVIOR line naming several behavior ids, or a second "Automatic fail" or
    "Pass conditions" section.

    ## Why is this bad?
    Each judge answers exactly one yes/no question (single behavior per judge). With two
    behaviors in one prompt a single `pass` cannot say which one failed, and a failure of
    either hides the state of the other.

    ## Example
    ```markdown
    BEHAVIOR: medications_extracted_correct, allergies_extracted_correct
    ```

    ## Use instead
    One prompt file per behavior, each with its own benchmark:
    ```markdown
    BEHAVIOR: medications_extracted_correct
    ```
    """

    code = "LJ013"
    name = "multiple-behaviors"
    severity = Severity.ERROR
    summary = "One prompt evaluates more than one behavior"

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        first: dict[str, int] = {}
        for heading in prompt.sections.headings:
            if heading.key not in {"behavior", "automatic_fail", "pass_conditions"}:
                continue
            if heading.key in first:
                message = (
                    f"second {TITLES[heading.key]} section (first on line {first[heading.key]}): "
                    "one prompt evaluates one behavior, split it into two prompt files"
                )
                yield self.diagnostic(prompt.display, heading.line, 1, message)
            first.setdefault(heading.key, heading.line)
            if heading.key == "behavior":
                rest = heading.text.split(":", 1)[1] if ":" in heading.text else ""
                ids = [part for part in _SEPARATOR.split(rest.strip(" *")) if part]
                if len(ids) > 1 and all(_ID.match(part) for part in ids):
                    message = (
                        f"BEHAVIOR names {len(ids)} behaviors ({', '.join(ids)}): "
                        "one prompt evaluates one behavior, split it into separate prompt files"
                    )
                    yield self.diagnostic(prompt.display, heading.line, 1, message)
