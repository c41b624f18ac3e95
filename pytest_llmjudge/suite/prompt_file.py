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
    prose: tuple[tuple[str, int, str], ...] = field(default=(), compare=False)
    notes: tuple[tuple[str, str], ...] = ()  # (list section, prose written after its list)

    def note(self, key: str) -> str:
        return next((text for section, text in self.notes if section == key), "")

    def heading(self, key: str) -> Heading | None:
        return next((h for h in self.headings if h.key == key), None)


def match_heading(line: str) -> tuple[str, str] | None:
    """``(section key, rest of line)`` if ``line`` opens a canonical section."""
    text = _plain(line)
    for key, pattern in _HEADINGS:
        found = pattern.match(text)
        if found:
            return key, found.group("rest").strip()
    return None


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


def parse_prompt(text: str, path: str) -> PromptSections:
    """Split a prompt file into canonical sections (unknown text is kept in ``prose``)."""
    bodies: dict[str, list[tuple[int, str]]] = {}
    headings: list[Heading] = []
    prose: list[tuple[str, int, str]] = []
    header_text: dict[str, str] = {}
    current = "preamble"
    in_rubric = False  # a rubric part has been seen
    for number, line in enumerate(split_lines(text), start=1):
        found = match_heading(line) if not line.startswith((" ", "\t")) else None
        if found and found[0] == "output_instruction" and not in_rubric:
            found = None  # "Respond only with JSON" inside SYSTEM is prose, not the trailing block
        if found and not (current == "inputs" and found[0] != "output_instruction"):
            key, rest = found
            in_rubric = in_rubric or key in _RUBRIC_PARTS
            headings.append(Heading(key, number, line.strip()))
            current = key
            header_text[key] = _plain(line)
            bodies.setdefault(key, [])
            if rest and key not in {"automatic_fail", "pass_conditions", "acceptable_variations"}:
                bodies[key].append((number, rest))
            continue
        if line.strip() in {"---", "***", "___"} or is_comment_line(line):
            continue
        bodies.setdefault(current, []).append((number, line))
        if current in {"preamble", "scope", "rubric"} and line.strip():
            prose.append((current, number, line))

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
        automatic_fail_header=header_text.get("automatic_fail", PromptSections.automatic_fail_header),
        automatic_fail=parse_bullets(bodies.get("automatic_fail", [])),
        pass_conditions=parse_bullets(bodies.get("pass_conditions", [])),
        acceptable_variations=parse_bullets(bodies.get("acceptable_variations", [])),
        uncertainty_policy=" ".join(prose_of("uncertainty_policy").split()),
        output_instruction=prose_of("output_instruction"),
        headings=tuple(headings),
        prose=tuple(prose),
        notes=tuple(notes),
    )
