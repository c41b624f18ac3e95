"""LJ014 output-schema."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ...suite.prompt_file import LIST_SECTIONS
from ..diagnostics import Diagnostic, Severity
from ..documents import PromptDocument, is_bullet_start
from ..rule import PromptRule

VERDICT_FIELDS = ("pass", "reason", "score", "confidence", "uncertain")
# Sections that talk to the judge; elsewhere only a line that starts with one of these verbs does
# (a rubric bullet such as "The output returns YAML" is about the candidate).
_JUDGE_SECTIONS = frozenset({"preamble", "system"})
_INSTRUCTION = re.compile(r"^\W*(?:respond|return|reply|answer|rate|score)\b", re.IGNORECASE)
_KEY = re.compile(r"""["'](?P<key>\w+)["']\s*:""")
_JSON = re.compile(r"\bjson\b", re.IGNORECASE)
_NEGATED_JSON = re.compile(r"\b(?:no|not|without|never|avoid)\b\W+(?:\w+\W+){0,2}json\b", re.IGNORECASE)
_SCORE_ONLY = re.compile(
    r"\b(?:score|rating|grade|number)\b.*?(?:\bfrom \d+ to \d+|\bbetween \d+ and \d+|\b\d+\s*[-–/]\s*\d+\b"
    r"|\bscale\b|\bonly\b)"
    r"|\b(?:only|just) (?:a |the |one )?(?:score|rating|grade|number)\b",
    re.IGNORECASE,
)
_FORMAT = re.compile(
    r"\b(?P<format>yaml|xml|markdown|csv|plain text|prose|a table|yes or no|pass or fail|pass/fail"
    r"|a single word|one word)\b",
    re.IGNORECASE,
)
_NEGATION_BEFORE = re.compile(
    r"\b(?:no|not|without|never|avoid|don't|do not)\b\W+(?:\w+\W+){0,2}$", re.IGNORECASE
)


class OutputSchema(PromptRule):
    """
    ## What it does
    Finds instructions to the judge that contradict the verdict it must return: a JSON object
    with `pass` (boolean) and `reason` (50–200 characters), optionally `score`, `confidence` and
    `uncertain`. It reads the SYSTEM section, the text before the first section, the trailing
    output instruction, and any other line that starts with "Respond", "Return", "Reply",
    "Answer", "Rate" or "Score" (rubric bullets describe the candidate output, not the judge's).
    It flags an instruction that spells out other keys or leaves out `pass` or `reason`, that
    asks for a score or a number alone, or that asks for another format (YAML, XML, Markdown,
    plain text, a yes/no word). A prompt with no output instruction is fine: the compiled
    request always ends with one asking for the verdict.

    ## Why is this bad?
    The judge receives the prompt's own instruction next to the plugin's (a trailing "Respond
    ONLY with compact JSON: …" block replaces the plugin's). Asked for `{"score": 1-5}` or
    `{"medications_correct": true}`, it is pulled away from the answer the plugin reads, so
    verdicts fail validation, come back without reasons, or cost retries.

    ## Example
    ```markdown
    Respond ONLY with compact JSON: {"medications_correct": true|false}
    ```

    ## Use instead
    ```markdown
    Respond ONLY with compact JSON: {"pass": true|false, "reason": "<50-200 characters citing the evidence>"}
    ```
    or no output instruction at all. Map `pass` to a behavior-specific name in reports, not in
    the prompt.
    """

    code = "LJ014"
    name = "output-schema"
    severity = Severity.WARNING
    summary = "An output instruction contradicts the JSON verdict with 'pass' and 'reason'"

    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]:
        for number, block in _instructions(prompt):
            problem = contradiction(block)
            if problem:
                message = f"output instruction {problem}: the judge must answer with a JSON object "
                message += "holding 'pass' and 'reason'"
                yield self.diagnostic(prompt.display, number, 1, message)


def contradiction(block: str) -> str | None:
    """How an output instruction contradicts the verdict schema, in words; None if it does not."""
    keys = list(dict.fromkeys(m.group("key") for m in _KEY.finditer(block)))
    if keys:
        unknown = [k for k in keys if k not in VERDICT_FIELDS]
        missing = [k for k in ("pass", "reason") if k not in keys]
        if unknown:
            return f"asks for {_names(unknown)}, which the verdict does not have"
        if missing:
            return f"asks for {_names(keys)} but not {_names(missing)}"
        return None
    if _NEGATED_JSON.search(block):
        return "asks for an answer that is not JSON"
    if _JSON.search(block):
        return None
    if _SCORE_ONLY.search(block) and not re.search(r"\bpass\b", block, re.IGNORECASE):
        return "asks for a score alone"
    for found in _FORMAT.finditer(block):
        if not _NEGATION_BEFORE.search(block[: found.start()]):
            return f"asks for {found.group('format')}"
    return None


def _names(keys: list[str]) -> str:
    return " and ".join(f"'{k}'" for k in keys)


def _instructions(prompt: PromptDocument) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of each instruction to the judge: the line and the lines after it up to a
    blank line or the next instruction."""
    starts = {h.line: h.key for h in prompt.sections.headings}
    section = "preamble"
    numbers: list[int] = []
    for number, raw in enumerate(prompt.lines, start=1):
        section = starts.get(number, section)
        if not raw.strip() or (section in LIST_SECTIONS and is_bullet_start(raw)):
            continue
        addressed = section == "output_instruction" or (section in _JUDGE_SECTIONS and _mentions_answer(raw))
        if addressed or _INSTRUCTION.match(raw):
            numbers.append(number)
    for number in numbers:
        lines = [prompt.line(number)]
        for following in range(number + 1, len(prompt.lines) + 1):
            raw = prompt.line(following)
            if not raw.strip() or following in numbers or following in starts:
                break
            lines.append(raw)
        yield number, "\n".join(lines)


def _mentions_answer(raw: str) -> bool:
    """A line of SYSTEM about the form of the judge's answer ("the output" there is the candidate's)."""
    return bool(re.search(r"\b(?:respond|response|answer|reply|return|your verdict)\b", raw, re.IGNORECASE))
