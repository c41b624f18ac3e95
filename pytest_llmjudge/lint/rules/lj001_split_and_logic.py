"""LJ001 split-and-logic."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...suite.prompt_file import Bullet
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..documents import PromptDocument
from ..logic import (
    bullet_text,
    continues_sentence,
    input_only,
    leading_conjunction,
    marker,
    normalize,
    reference_back,
    self_contained,
    trailing_conjunction,
)
from ..rule import PromptRule


class SplitAndLogic(PromptRule):
    """
    ## What it does
    Finds "Automatic fail" bullets that are fragments of one compound condition: a bullet that
    only states a fact about the inputs (the narrative, the ground truth, the case), a bullet
    that refers back to another ("this information", "that value", "it", "either", "the gap"),
    a bullet that starts with a conjunction ("and", "but", "unless"), a bullet whose
    predecessor ends on one, or a lowercase bullet that continues the previous sentence.
    Independent failure modes, each a complete failure of the output, are never flagged,
    however many there are.

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
        sections = prompt.sections
        header = normalize(sections.automatic_fail_header).lower()
        bullets = sections.automatic_fail
        if len(bullets) < 2 or "all of the following" in header:
            return
        parsed = [bullet_text(prompt, b) for b in bullets]
        texts = [p.text for p in parsed]
        grouped = [self_contained(p) for p in parsed]
        reasons, links = _links(texts, grouped, [b.line for b in bullets])
        for group in _groups(links, len(bullets)):
            members = [bullets[i] for i in group]
            lines = ", ".join(str(b.line) for b in members)
            why = "; ".join(reasons[i] for i in group if i in reasons)
            message = (
                f"bullets on lines {lines} read as one condition split across bullets ({why}); "
                "each one fails the case on its own: join them into one bullet with explicit AND"
            )
            yield self.diagnostic(prompt.display, members[0].line, 1, message, _join_fix(prompt, members))


def _links(
    texts: list[str], grouped: list[bool], lines: list[int]
) -> tuple[dict[int, str], set[tuple[int, int]]]:
    """Why each fragment bullet is one, and which neighbouring bullets belong together.

    ``grouped`` bullets already join their own conditions: their references point inwards and
    their mention of the inputs is part of a complete condition, so only conjunctions at their
    edges can tie them to a neighbour.
    """
    reasons: dict[int, str] = {}
    links: set[tuple[int, int]] = set()
    sentence_style = sum(normalize(t).endswith((".", "!", "?")) for t in texts) > 0
    for i, text in enumerate(texts):
        opener = leading_conjunction(text)
        continued = continues_sentence(text, texts[i - 1], sentence_style) if i else None
        reference = None if grouped[i] else reference_back(text)
        if i and (opener or continued):
            word = opener or continued
            reasons[i] = f"line {lines[i]} starts with '{word}'"
            links.add((i - 1, i))
        elif reference:
            reasons[i] = f"line {lines[i]} refers back with '{reference}'"
            links.add((i - 1, i) if i else (0, 1))
        elif not grouped[i] and input_only(text):
            reasons[i] = f"line {lines[i]} only describes the inputs, not the output"
            next_refers = (
                i + 1 < len(texts) and not grouped[i + 1] and reference_back(texts[i + 1]) is not None
            )
            # A fact about the inputs qualifies the bullet that refers back to it, else the one before.
            links.add((i, i + 1) if i == 0 or next_refers else (i - 1, i))
        closer = trailing_conjunction(text)
        if closer and i + 1 < len(texts):
            reasons.setdefault(i, f"line {lines[i]} ends on '{closer}'")
            links.add((i, i + 1))
    return reasons, links


def _groups(links: set[tuple[int, int]], count: int) -> Iterator[list[int]]:
    """Runs of consecutive bullets joined by links (links only join neighbours)."""
    joined = {a for a, _ in links}
    start = 0
    for i in range(count):
        if i not in joined:
            if i > start:
                yield list(range(start, i + 1))
            start = i + 1


def _join_fix(prompt: PromptDocument, members: list[Bullet]) -> Fix | None:
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
