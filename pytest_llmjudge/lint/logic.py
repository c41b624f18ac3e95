"""Reading the logic of rubric bullets: their text over several lines, their words, whether they
name the output, and which conjunctions join whole conditions rather than nouns.

``fragments`` builds on these to tell fragments of a split condition from complete ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..suite.prompt_file import Bullet
from .documents import PromptDocument

_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z']*(?:/[A-Za-z]+)?")


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_COMMENT = re.compile(r"<!--.*?-->")


def _without_comments(text: str, replace: Callable[[re.Match[str]], str]) -> str:
    # Only up to the last "-->": after it, each unclosed "<!--" made the regex scan to the end.
    end = text.rfind("-->") + 3
    return _COMMENT.sub(replace, text[:end]) + text[end:] if end > 2 else text


_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "`": "", "*": "", "_": " "})

OUTPUT_WORDS = _set(
    "output outputs candidate response answer copilot ai model generated summary extraction prediction"
)
_NOT_OUTPUT = _set("expected reference gold ideal correct target")
STOPWORDS = _set(
    "the a an of in on to for by with as at from not no does do did is are was were be been has have had "
    "any all every each its their this that there than then so also"
)
AUXILIARIES = _set(
    "is are was were has have had does do did can cannot could will would should may might must isn't aren't "
    "wasn't weren't hasn't haven't doesn't don't didn't can't"
)
VERBS = AUXILIARIES | _set(
    "lacks contains omits contradicts differs appears says leaves describes drops misses acknowledges "
    "indicates confirms denies negates fails exceeds provides gives includes mentions adds invents shows "
    "specifies identifies captures reflects preserves remains becomes conflicts duplicates repeats swaps "
    "reads refers assigns"
)
# Verbs that are also plural nouns ("records", "lists"): verbs only right after a known subject.
_NOUN_VERBS = _set(
    "records lists reports states marks notes names changes uses documents matches supports labels"
)
_SUBJECT_NOUNS = _set(
    "narrative output truth field value patient case source transcript candidate response it they copilot "
    "model record entry finding medication"
)
_DETERMINERS = _set("the a an no any every each its their this that these those some")
_FLOATED = frozenset({"both", "all", "each"})


def normalize(text: str) -> str:
    """Straight quotes and apostrophes, no HTML comments or markdown emphasis, single spaces."""
    return " ".join(_without_comments(text, lambda _: " ").translate(_QUOTES).split())


@dataclass(frozen=True)
class BulletText:
    """A bullet's text joined over its lines, with a map from offsets back to ``(line, col)``."""

    text: str
    segments: tuple[tuple[int, int, int], ...]  # (offset in text, line, 0-based column of that offset)
    nested: bool = False  # has indented sub-bullets of its own

    def position(self, offset: int) -> tuple[int, int]:
        """1-based ``(line, col)`` of ``offset`` in the raw file."""
        start, line, col = next(s for s in reversed(self.segments) if s[0] <= offset)
        return line, col + (offset - start) + 1


def bullet_text(prompt: PromptDocument, bullet: Bullet) -> BulletText:
    parts: list[str] = []
    segments: list[tuple[int, int, int]] = []
    offset = 0
    for number, raw in prompt.bullet_lines(bullet):
        marker = _MARKER.match(raw)
        col = marker.end() if marker else len(raw) - len(raw.lstrip())
        piece = _without_comments(raw[col:], lambda m: " " * len(m.group(0))).rstrip()
        if offset:
            offset += 1
        segments.append((offset, number, col))
        parts.append(piece)
        offset += len(piece)
    nested = any(_MARKER.match(raw) for _, raw in prompt.bullet_lines(bullet)[1:])
    return BulletText(" ".join(parts), tuple(segments), nested)


def marker(raw: str) -> str:
    """The list marker of a bullet line with its indentation and trailing space (``"  - "``)."""
    found = _MARKER.match(raw)
    return found.group(0) if found else ""


def words(text: str) -> list[str]:
    """Lower-case words, possessives dropped ("output's" is "output")."""
    return [w.lower().removesuffix("'s").rstrip("'") for w in _WORD.findall(normalize(text))]


def self_contained(bullet: BulletText) -> bool:
    """A bullet that groups its own conditions (sub-bullets, AND, clauses joined by and/or).

    References inside such a bullet point at its own parts, not at a neighbouring bullet.
    """
    return bullet.nested or bool(conjunctions(bullet.text))


def mentions_output(text: str) -> bool:
    tokens = words(text)
    return any(
        w in OUTPUT_WORDS and (i == 0 or tokens[i - 1] not in _NOT_OUTPUT) for i, w in enumerate(tokens)
    )


@dataclass(frozen=True)
class Conjunction:
    """A conjunction in a bullet: its offset, its word, and whether it joins two whole conditions."""

    offset: int
    word: str
    explicit: bool
    grouped: bool


def conjunctions(text: str) -> list[Conjunction]:
    """Every ``and``/``or`` that joins two conditions, plus every upper-case ``AND``/``OR``."""
    found: list[Conjunction] = []
    depth = 0
    for match in re.finditer(r"[()]|\b(?:and|or|AND|OR)\b", text):
        token = match.group(0)
        if token in "()":
            depth = max(0, depth + (1 if token == "(" else -1))
            continue
        explicit = token.isupper()
        left, right = text[: match.start()], text[match.end() :]
        if explicit or joins_clauses(left, right):
            grouped = depth > 0 or _opened_by(left, "either" if token.lower() == "or" else "both")
            found.append(Conjunction(match.start(), token.lower(), explicit, grouped))
    return found


def _opened_by(left: str, word: str) -> bool:
    return word in words(left)


def joins_clauses(left: str, right: str) -> bool:
    """True when both sides of a conjunction are clauses with their own subject and verb."""
    right_words = words(right.lstrip(" ,"))
    left_words = words(re.split(r"[;:,(]", left)[-1]) if left.strip() else []
    return _starts_clause(right_words) and _has_verb(left_words)


def _starts_clause(tokens: list[str]) -> bool:
    if not tokens:
        return False
    if tokens[0] in _DETERMINERS:
        head = tokens[1:5]
    elif tokens[0] in _SUBJECT_NOUNS or tokens[:2] == ["ground", "truth"]:
        head = tokens[:4]
    else:
        return False
    if any(w in _FLOATED for w in head):
        return False
    return _has_verb(head)


def _has_verb(tokens: list[str]) -> bool:
    return verb_count(tokens) > 0


def verb_count(tokens: list[str]) -> int:
    """How many known verbs ``tokens`` hold ("records" counts only right after a subject noun)."""
    return sum(
        word in VERBS or (word in _NOUN_VERBS and i > 0 and tokens[i - 1] in _SUBJECT_NOUNS)
        for i, word in enumerate(tokens)
    )
