"""LJ014 output-schema."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..documents import PromptDocument
from ..rule import PromptRule

_INSTRUCTION = re.compile(r"\b(?:respond|return|reply|output|answer|format)\b.*\bjson\b", re.IGNORECASE)
_KEY = re.compile(r"""["'](?P<key>\w+)["']\s*:""")


class OutputSchema(PromptRule):
    """
    ## What it does
    Checks that the prompt asks for the JSON verdict the plugin reads: an instruction such as
    "Respond only with a single JSON object", and, where the instruction spells out fields,
    that they include `pass` and `reason`.

    ## Why is this bad?
    The plugin reads `pass` (boolean) and `reason` (50–200 characters). A prompt that asks for
    `{"score": 1-5}` or `{"medications_correct": true}` pulls the judge towards an answer the
    plugin cannot read, so verdicts fail validation or lose their reasons.

    ## Example
    ```markdown
    Respond ONLY with compact JSON: {"medications_correct": true|false}
    ```

    ## Use instead
    ```markdown
    Respond ONLY with compact JSON: {"pass": true|false, "reason": "<50-200 characters citing the evidence>"}
    ```
    Map `pass` to a behavior-specific name in reports, not in the prompt.
    """

    code = "LJ014"
    name = "output-schema"
    severity = Severity.WARNING
    summary = "The prompt does not ask for the JSON verdict with 'pass' and 'reason'"

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        instructions = [n for n, raw in enumerate(prompt.lines, start=1) if _INSTRUCTION.search(raw)]
        if not instructions:
            message = "no instruction to respond with a JSON object holding 'pass' and 'reason'"
            yield self.diagnostic(prompt.display, max(len(prompt.lines), 1), 1, message)
            return
        for number in instructions:
            keys = {m.group("key") for m in _KEY.finditer(self._block(prompt, number))}
            missing = [k for k in ("pass", "reason") if k not in keys]
            if keys and missing:
                named = ", ".join(f"'{k}'" for k in sorted(keys))
                message = (
                    f"output instruction asks for {named} but not {' and '.join(repr(k) for k in missing)}"
                )
                yield self.diagnostic(prompt.display, number, 1, message)

    @staticmethod
    def _block(prompt: PromptDocument, start: int) -> str:
        """The instruction line and the lines after it up to the next blank line."""
        lines = []
        for number in range(start, len(prompt.lines) + 1):
            raw = prompt.line(number)
            if not raw.strip() and number > start:
                break
            lines.append(raw)
        return "\n".join(lines)
