"""Parse canonical ``*_prompt.md`` judge prompts into their sections.

The canonical structure is SYSTEM, BEHAVIOR, DESCRIPTION, EVALUATION SCOPE (Include / Ignore),
RUBRIC (Automatic fail, Pass conditions, Acceptable variations, Uncertainty policy), INPUTS and
an output instruction. Real files vary: bullets carry ``Example:`` lines, bullets wrap over
several lines, a "Respond ONLY with compact JSON" block trails the file, line endings are CRLF.
The parser keeps every line number so that the linter and error messages can point into the file.
It runs in time linear in the file: no pattern here backtracks over a long line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .text import split_lines as split_lines  # re-exported: the linter splits lines the same way

# Section keys in canonical order.
CANONICAL_ORDER = (
    "system",
    "behavior",
    "description",
    "scope",
    "include",
    "ignore",
    "rubric",
    "automatic_fail",
    "pass_conditions",
    "acceptable_variations",
    "uncertainty_policy",
    "inputs",
    "output_instruction",
)

_HEADINGS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (key, re.compile(pattern, re.IGNORECASE))
    for key, pattern in (
        ("system", r"^system\s*:\s*(?P<rest>.*)$"),
        ("behavior", r"^behaviou?r\s*:\s*(?P<rest>.*)$"),
        ("description", r"^(?:description|goal)\s*:\s*(?P<rest>.*)$"),
        ("scope", r"^evaluation scope\s*:?\s*(?P<rest>)$"),
        ("include", r"^include\s*:\s*(?P<rest>.*)$"),
        ("ignore", r"^ignore\s*:\s*(?P<rest>.*)$"),
        ("rubric", r"^rubric\s*:?\s*(?P<rest>)$"),
        # possessive ``[^:]*+``: backtracking it cannot match, and made a long line quadratic
        ("automatic_fail", r"^automatic(?:ally)?\s+fail\b(?P<rest>[^:]*+:?)\s*$"),
        ("pass_conditions", r"^pass conditions\b(?P<rest>[^:]*+:?)\s*$"),
        ("acceptable_variations", r"^acceptable variations\b(?P<rest>[^:]*+:?)\s*$"),
        ("uncertainty_policy", r"^uncertainty policy\s*:?\s*(?P<rest>.*)$"),
        ("inputs", r"^inputs\s*:?\s*(?P<rest>)$"),
        (
            "output_instruction",
            r"^(?P<rest>(?:respond|return|output)\b.*\b(?:json)\b.*|output(?: format| schema)?\s*:.*)$",
        ),
    )
)
# A Markdown heading (``#`` to ``######``) names its section with or without a colon:
# ``# SYSTEM``, ``## BEHAVIOR: negation_preserved``, ``### Pass conditions``; so does a label line
# in capitals (``SYSTEM`` alone on its line, as ``RUBRIC`` and ``INPUTS`` are written).
_MARKDOWN = re.compile(r"^#{1,6}[ \t]+\S")
_NAMED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (key, re.compile(rf"^(?:{names})\s*(?::\s*(?P<rest>.*))?$", re.IGNORECASE))
    for key, names in (
        ("system", "system"),
        ("behavior", "behaviou?r"),
        ("description", "description|goal"),
        ("scope", "evaluation scope|scope"),
        ("include", "include"),
        ("ignore", "ignore"),
        ("rubric", "rubric"),
        ("uncertainty_policy", "uncertainty policy"),
        ("inputs", "inputs"),
        ("output_instruction", "output(?: format| schema| instructions?)?"),
    )
)
_BULLET = re.compile(r"^(?P<indent>\s*)(?:[-*•]|(?P<num>\d+)[.)])\s+(?P<text>.*)$")
_EXAMPLE = re.compile(r"^\s*(?:[-*•]\s+)?(?:e\.g\.|examples?)\s*:\s*(?P<text>.*)$", re.IGNORECASE)
_RUBRIC_PARTS = frozenset(
    {"automatic_fail", "pass_conditions", "acceptable_variations", "uncertainty_policy"}
)
LIST_SECTIONS = frozenset({"include", "ignore", "automatic_fail", "pass_conditions", "acceptable_variations"})


@dataclass(frozen=True)
class Bullet:
    """One list item: its text (continuation lines joined), where it starts, and its examples."""

    text: str
    line: int
    number: int | None = None
    examples: tuple[str, ...] = ()
    end_line: int = 0


@dataclass(frozen=True)
class Heading:
    key: str
    line: int
    text: str


@dataclass(frozen=True)
class Unplaced:
    """A line of content that no section holds, so the judge would never see it, and why."""

    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class PromptSections:
    """A judge prompt broken into canonical sections."""

    path: str
    system: str = ""
    behavior: str = ""
    description: str = ""
    include: tuple[Bullet, ...] = ()
    ignore: tuple[Bullet, ...] = ()
    automatic_fail_header: str = "Automatic fail if any of the following are true:"
    automatic_fail: tuple[Bullet, ...] = ()
    pass_conditions: tuple[Bullet, ...] = ()
    acceptable_variations: tuple[Bullet, ...] = ()
    uncertainty_policy: str = ""
    output_instruction: str = ""
    examples: tuple[str, ...] = ()
    headings: tuple[Heading, ...] = field(default=(), compare=False)
    notes: tuple[tuple[str, str], ...] = ()  # (list section, prose written after its list)
    unplaced: tuple[Unplaced, ...] = field(default=(), compare=False)

    def note(self, key: str) -> str:
        return next((text for section, text in self.notes if section == key), "")

    def heading(self, key: str) -> Heading | None:
        return next((h for h in self.headings if h.key == key), None)


def match_heading(line: str) -> tuple[str, str] | None:
    """``(section key, rest of line)`` if ``line`` opens a canonical section."""
    text = _plain(line)
    # a Markdown heading, or a name alone in capitals (``SYSTEM``, ``DESCRIPTION``), needs no colon
    named = _NAMED if is_markdown_heading(line) or text.isupper() else ()
    for key, pattern in (*named, *_HEADINGS):
        found = pattern.match(text)
        if found:
            return key, (found.group("rest") or "").strip()
    return None


def is_markdown_heading(line: str) -> bool:
    """``line`` is a Markdown ATX heading (``# …`` to ``###### …``) at the start of its line."""
    return bool(_MARKDOWN.match(line))


def _plain(line: str) -> str:
    """A heading line without Markdown markup: ``**Automatic fail if …:**`` → ``Automatic fail if …:``."""
    text = line.strip()
    if text.startswith("#"):
        text = text.lstrip("#").lstrip()
    elif text.startswith("**"):
        text = text[2:]
    return text.removesuffix("**").strip()


def is_comment_line(line: str) -> bool:
    """A line holding only a Markdown comment: invisible when rendered; holds ``noqa`` comments."""
    text = line.strip()
    return len(text) >= 7 and text.startswith("<!--") and text.endswith("-->")


def split_trailing(lines: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], str]:
    """Separate a list from prose that follows it after a blank line.

    "Set pass = true only if all conditions 1–3 hold." under the pass conditions is a
    statement about the list, not part of its last item.
    """
    seen_item = blank = False
    for index, (_, raw) in enumerate(lines):
        if not raw.strip():
            blank = seen_item
            continue
        is_item = bool(_BULLET.match(raw) or _EXAMPLE.match(raw)) or raw.startswith((" ", "\t"))
        if seen_item and blank and not is_item:
            return lines[:index], " ".join(" ".join(r.split()) for _, r in lines[index:] if r.strip())
        seen_item = seen_item or bool(_BULLET.match(raw))
        blank = False
    return lines, ""


@dataclass
class _OpenBullet:
    """A bullet being read: its text parts are joined once at the end, so that a bullet of many
    continuation lines costs linear time."""

    parts: list[str]
    line: int
    number: int | None = None
    examples: list[str] = field(default_factory=list)
    end: int = 0

    def close(self) -> Bullet:
        text = " ".join(part for part in self.parts if part)
        return Bullet(text, self.line, self.number, tuple(self.examples), self.end)


def _bullet_number(digits: str | None) -> int | None:
    # "12345…" of thousands of digits is no list number (and int() would refuse it)
    return int(digits) if digits and len(digits) <= 9 else None


def parse_bullets(lines: list[tuple[int, str]]) -> tuple[Bullet, ...]:
    """Group ``(line number, text)`` pairs into bullets with continuations and examples."""
    items: list[_OpenBullet] = []
    base_indent: int | None = None
    for number, raw in lines:
        if not raw.strip():
            continue
        example = _EXAMPLE.match(raw)
        bullet = _BULLET.match(raw)
        if example and items and example.group("text").strip():
            items[-1].examples.append(example.group("text").strip())
            items[-1].end = number
            continue
        indent = len(bullet.group("indent")) if bullet else 0
        if bullet and (base_indent is None or indent <= base_indent):
            base_indent = indent if base_indent is None else base_indent
            num = bullet.group("num")
            items.append(_OpenBullet([bullet.group("text").strip()], number, _bullet_number(num), end=number))
        elif items:
            items[-1].parts.append(bullet.group("text").strip() if bullet else raw.strip())
            items[-1].end = number
        else:
            items.append(_OpenBullet([raw.strip()], number, end=number))
    return tuple(item.close() for item in items)


# Sections whose own body is not sent: text written directly under them is reported.
_HOLDERS = {
    "preamble": "text before the first section",
    "scope": "text directly under EVALUATION SCOPE, which holds only its Include and Ignore lists",
    "rubric": (
        "text directly under RUBRIC, which holds only Automatic fail, Pass conditions, "
        "Acceptable variations and Uncertainty policy"
    ),
    "unknown": "text under a heading that is not a section of a judge prompt",
}
# What INPUTS may hold: input names and placeholders (``GROUND_TRUTH:``, ``{ground_truth}``,
# ``## SOURCE_NARRATIVE``); the plugin sends each case's data in their place.
_INPUT_LINE = re.compile(
    r"^(?:#{1,6}\s+|\*\*)?(?:[A-Z][A-Z0-9_ ]*+:?(?:\*\*)?)?\s*(?:\{\{?\s*[\w.]+\s*\}?\})?$"
)
_INPUTS_HOLD = "INPUTS holds only input names and {placeholders}; the plugin sends each case's data there"
_AFTER_INPUTS = "a section after INPUTS: only the output instruction may follow INPUTS, move it above INPUTS"
_BARE_FAIL = re.compile(r"^automatic(?:ally)?\s+fail\s*:?$", re.IGNORECASE)
_BEHAVIOR_LINE = "BEHAVIOR holds one line, the behavior id; put an explanation under DESCRIPTION"


@dataclass
class _Reader:
    """Reads a prompt file line by line into section bodies, and notes every line it cannot place."""

    bodies: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    headings: list[Heading] = field(default_factory=list)
    header_text: dict[str, str] = field(default_factory=dict)
    unplaced: list[Unplaced] = field(default_factory=list)
    current: str = "preamble"
    in_rubric: bool = False  # a rubric part has been seen

    def read(self, number: int, line: str) -> None:
        found = match_heading(line) if not line.startswith((" ", "\t")) else None
        markdown = is_markdown_heading(line)
        if found and found[0] == "output_instruction" and not (self.in_rubric or markdown):
            found = None  # "Respond only with JSON" inside SYSTEM is prose, not the trailing block
        if self.current == "inputs" and found and found[0] != "output_instruction":
            self.unplaced.append(Unplaced(number, line.strip(), _AFTER_INPUTS))
            return
        if found:
            self.open(number, line, *found)
            return
        if line.strip() in {"---", "***", "___"} or is_comment_line(line):
            return
        if markdown and self.current != "inputs":
            self.current = "unknown"
            reason = "a heading that is not a section of a judge prompt"
            self.unplaced.append(Unplaced(number, line.strip(), reason))
            return
        self.bodies.setdefault(self.current, []).append((number, line))
        if self.current in _HOLDERS and line.strip():
            self.unplaced.append(Unplaced(number, line.strip(), _HOLDERS[self.current]))
        elif self.current == "inputs" and not _INPUT_LINE.match(line.strip()):
            self.unplaced.append(Unplaced(number, line.strip(), _INPUTS_HOLD))

    def open(self, number: int, line: str, key: str, rest: str) -> None:
        self.in_rubric = self.in_rubric or key in _RUBRIC_PARTS
        self.headings.append(Heading(key, number, line.strip()))
        self.current = key
        self.header_text[key] = _plain(line)
        self.bodies.setdefault(key, [])
        if rest and key not in {"automatic_fail", "pass_conditions", "acceptable_variations"}:
            self.bodies[key].append((number, rest))

    def behavior_extras(self) -> list[Unplaced]:
        """Every BEHAVIOR line after its first: only the first (the id) is sent."""
        lines = [(number, text) for number, text in self.bodies.get("behavior", []) if text.strip()]
        return [Unplaced(number, text.strip(), _BEHAVIOR_LINE) for number, text in lines[1:]]


def _fail_header(text: str) -> str:
    """The Automatic fail header as written, or the canonical one for a bare ``### Automatic fail``."""
    bare = not text or _BARE_FAIL.match(text)
    return PromptSections.automatic_fail_header if bare else text


def parse_prompt(text: str, path: str) -> PromptSections:
    """Split a prompt file into canonical sections; a line no section holds is kept in ``unplaced``."""
    reader = _Reader()
    for number, line in enumerate(split_lines(text), start=1):
        reader.read(number, line)
    bodies = reader.bodies
    unplaced = sorted([*reader.unplaced, *reader.behavior_extras()], key=lambda u: u.line)

    def prose_of(key: str) -> str:
        return "\n".join(line for _, line in bodies.get(key, [])).strip()

    notes: list[tuple[str, str]] = []
    for key in sorted(LIST_SECTIONS):
        if key in bodies:
            bodies[key], note = split_trailing(bodies[key])
            if note:
                notes.append((key, note))

    return PromptSections(
        path=path,
        system=prose_of("system"),
        behavior=prose_of("behavior").splitlines()[0].strip() if prose_of("behavior") else "",
        description=" ".join(prose_of("description").split()),
        include=parse_bullets(bodies.get("include", [])),
        ignore=parse_bullets(bodies.get("ignore", [])),
        automatic_fail_header=_fail_header(reader.header_text.get("automatic_fail", "")),
        automatic_fail=parse_bullets(bodies.get("automatic_fail", [])),
        pass_conditions=parse_bullets(bodies.get("pass_conditions", [])),
        acceptable_variations=parse_bullets(bodies.get("acceptable_variations", [])),
        uncertainty_policy=" ".join(prose_of("uncertainty_policy").split()),
        output_instruction=prose_of("output_instruction"),
        headings=tuple(reader.headings),
        notes=tuple(notes),
        unplaced=tuple(unplaced),
    )
