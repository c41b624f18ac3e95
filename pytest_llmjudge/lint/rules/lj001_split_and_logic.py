"""LJ001 split-and-logic."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...suite.prompt_file import Bullet
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..documents import PromptDocument
from ..fragments import Split, find_splits
from ..logic import bullet_text, marker, normalize, self_contained
from ..rule import PromptRule


class SplitAndLogic(PromptRule):
    """
    ## What it does
    Finds "Automatic fail" bullets that are fragments of one compound condition, on strong
    evidence only:
    - a continuation: the bullet starts with "and" or "but", is a subordinate clause without a
      main clause ("Unless the narrative documents it."), starts lowercase with "which" or after
      an unfinished sentence, or its predecessor ends on a comma or a conjunction;
    - a back-reference whose antecedent is only in another bullet: "that medication" when
      another bullet names the medication, "this information", "it" with nothing before it,
      "either" or "both" with no pair, "the gap" or "the discrepancy" when the bullet describes
      none;
    - a statement about the inputs (the narrative, the ground truth) that describes no failure
      of the output ("The narrative does not contain the value.");
    - an absence that only qualifies another bullet ("No clarification is given.").

    Independent failure modes are never flagged, however many there are, including bullets
    that mention the narrative while stating an output failure ("… but the age field is left
    unknown"), references whose antecedent is in the same bullet ("… such that the true value
    cannot be determined, and the output did not flag the gap"), "this" or "these" inside a
    parenthetical example, and domain prefixes ("Stroke: …", "RSI: …"). Weaker signs are
    reported by the opt-in LJ004.

    ## Why is this bad?
    The header "Automatic fail if any of the following are true" gives its bullets OR logic:
    the judge fails the case as soon as any single bullet holds. Conditions that only fail
    together, written as separate bullets, make the judge fail correct outputs (a narrative
    that lacks a value is not, on its own, a failure of the output).

    ## Example
    ```markdown
    Automatic fail if any of the following are true:
    - Field is blank/null in the output.
    - Narrative does not contain this information.
    - Output provides no acknowledgment of the gap.
    ```

    ## Use instead
    ```markdown
    Automatic fail if any of the following are true:
    - Field is blank/null AND narrative lacks information AND output provides no acknowledgment.
    ```
    The fix (unsafe, applied with `--unsafe-fixes`) joins the fragments into one bullet with
    explicit AND; read the result, since pronouns such as "this information" may need rewording.
    """

    code = "LJ001"
    name = "split-and-logic"
    severity = Severity.ERROR
    summary = "Automatic-fail bullets are fragments of one condition split across bullets"
    fixable = True

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        for split, members in splits(prompt, strong=True):
            yield self.diagnostic(
                prompt.display, members[0].line, 1, split_message(split, members), join_fix(prompt, members)
            )


def splits(prompt: PromptDocument, strong: bool) -> Iterator[tuple[Split, list[Bullet]]]:
    """The automatic-fail bullets that read as one split condition, on strong or weak evidence."""
    sections = prompt.sections
    bullets = sections.automatic_fail
    if len(bullets) < 2 or "all of the following" in normalize(sections.automatic_fail_header).lower():
        return
    parsed = [bullet_text(prompt, b) for b in bullets]
    found = find_splits(
        [p.text for p in parsed], [b.line for b in bullets], [self_contained(p) for p in parsed]
    )
    for split in found[0] if strong else found[1]:
        yield split, [bullets[i] for i in split.members]


def split_message(split: Split, members: list[Bullet], weak: bool = False) -> str:
    lines = ", ".join(str(b.line) for b in members)
    why = "; ".join(split.reasons)
    if weak:
        return (
            f"bullets on lines {lines} may be one condition split across bullets ({why}): "
            "if they fail the case only together, join them into one bullet with explicit AND"
        )
    return (
        f"bullets on lines {lines} read as one condition split across bullets ({why}); "
        "each one fails the case on its own: join them into one bullet with explicit AND"
    )


def join_fix(prompt: PromptDocument, members: list[Bullet]) -> Fix | None:
    parts = []
    for bullet in members:
        text = normalize(bullet_text(prompt, bullet).text).rstrip(" .;,:")
        first = text.split(" ", 1)[0].lower()
        if first in {"and", "also", "plus", "but"}:
            text = text.split(" ", 1)[1] if " " in text else ""
        last = text.rsplit(" ", 1)[-1]
        if last.lower() in {"and", "or", "but"}:
            text = text.rsplit(" ", 1)[0]
        parts.append(text)
    if not all(parts):
        return None
    joined = parts[0] + "".join(f" AND {p[0].lower() + p[1:] if p[1:2].islower() else p}" for p in parts[1:])
    lead = marker(prompt.line(members[0].line)) or "- "
    examples = [
        raw
        for bullet in members
        for number in range(bullet.line, bullet.end_line + 1)
        if (raw := prompt.line(number)).strip() and number not in {n for n, _ in prompt.bullet_lines(bullet)}
    ]
    edit = Edit(members[0].line, members[-1].end_line, (f"{lead}{joined}.", *examples))
    return Fix("join the fragments into one bullet with explicit AND", (edit,), safe=False)
