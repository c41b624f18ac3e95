"""Reading the logic of rubric bullets: who a bullet talks about, what it refers back to, and
which conjunctions join whole conditions rather than nouns.

The checks are deliberately narrow. A bullet is treated as a fragment of a compound condition
only on concrete evidence (a leading conjunction, a reference back, a statement that mentions
the inputs but never the output); anything else is assumed to be a complete failure mode,
because a linter that flags correct prompts teaches authors to ignore it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..suite.prompt_file import Bullet
from .documents import PromptDocument

_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z']*(?:/[A-Za-z]+)?")


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_COMMENT = re.compile(r"<!--.*?-->")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "`": "", "*": "", "_": " "})

OUTPUT_WORDS = _set(
    "output outputs candidate response answer copilot ai model generated summary extraction prediction"
)
_NOT_OUTPUT = _set("expected reference gold ideal correct target")
_CONTEXT_WORDS = _set(
    "narrative narratives source transcript reference gold expected label labels case encounter patient "
    "context input inputs chart"
)
_FAILURE_WORDS = _set(
    "missing omitted omits omit dropped drops added adds invented invents fabricated fabricates hallucinated "
    "hallucinates incorrect incorrectly wrong wrongly inaccurate misspelled misspells misattributed "
    "mislabeled reported extracted transcribed swapped duplicated truncated captured missed ignored lost "
    "misstated misreported altered changed flipped contradicted"
)
# "appears as present", "reads as absent": a predicate about what the output shows.
_SHOWN_AS = re.compile(r"\b(?:appears?|reads?|shows?|shown|reported|listed|recorded|documented) as\b")
_LEADING_CONJUNCTIONS = _set(
    "and or but nor also plus yet then unless while whereas although though except additionally "
    "furthermore moreover otherwise and/or"
)
_LEADING_PHRASES = ("as well as ", "along with ", "together with ", "in addition ")
_SUBORDINATORS = _set(
    "which where when whereas because so unless while although though if that since whose who as provided "
    "given even except then"
)
_TRAILING_WORDS = _set(
    "and or but nor with where when if unless because that which while whereas although plus as than and/or"
)
_LEADING_REFERENCES = _set("it its they them their this that these those such said")
_DEICTIC_NOUNS = _set(
    "case encounter behavior behaviour rubric evaluation prompt patient judge task benchmark section list "
    "document note record transcript narrative output response trace run conversation call is was are has "
    "does"
)
_ANAPHORIC_NOUNS = _set(
    "value values time times field fields information info data medication finding item entry dose date "
    "number result gap omission error discrepancy condition one fact detail amount reading"
)
_DEFINITE_REFERENCE = re.compile(
    r"\b(?:the (?:gap|discrepancy|omission|mismatch|difference|above|former|latter|aforementioned)"
    r"|the (?:previous|preceding|prior) (?:bullet|condition|item|one)|(?:as|mentioned|listed|stated) above)\b"
)
_PRONOUNS = frozenset({"it", "they", "them"})
_STOPWORDS = _set(
    "the a an of in on to for by with as at from not no does do did is are was were be been has have had "
    "any all every each its their this that there than then so also"
)
_AUXILIARIES = _set(
    "is are was were has have had does do did can cannot could will would should may might must isn't aren't "
    "wasn't weren't hasn't haven't doesn't don't didn't can't"
)
_VERBS = _AUXILIARIES | _set(
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
    return " ".join(_COMMENT.sub(" ", text).translate(_QUOTES).split())


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
        piece = _COMMENT.sub(lambda m: " " * len(m.group(0)), raw[col:]).rstrip()
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


def input_only(text: str) -> bool:
    """True when the bullet states a fact about the inputs (narrative, ground truth, case) only."""
    tokens = words(text)
    lowered = " ".join(tokens)
    about_inputs = (
        any(w in _CONTEXT_WORDS for w in tokens) or "ground truth" in lowered or "ground-truth" in lowered
    )
    shown = bool(_SHOWN_AS.search(lowered))
    return (
        about_inputs
        and not shown
        and not mentions_output(text)
        and not any(w in _FAILURE_WORDS for w in tokens)
    )


def leading_conjunction(text: str) -> str | None:
    lowered = normalize(text).lower()
    if lowered.startswith(("&", "+")):
        return lowered[0]
    for phrase in _LEADING_PHRASES:
        if lowered.startswith(phrase):
            return phrase.strip()
    first = words(text)[:1]
    return first[0] if first and first[0] in _LEADING_CONJUNCTIONS else None


def trailing_conjunction(text: str) -> str | None:
    stripped = normalize(text).rstrip()
    if stripped.endswith((",", ";", ":", "—", "–", "-", "&")):
        return stripped[-1]
    last = words(stripped)[-1:]
    return last[0] if last and last[0] in _TRAILING_WORDS else None


def continues_sentence(text: str, previous: str, sentence_style: bool) -> str | None:
    """The word a lowercase bullet continues its predecessor with, if it does."""
    stripped = normalize(text)
    if not stripped or not stripped[0].islower():
        return None
    first = words(stripped)[0]
    if first in _SUBORDINATORS:
        return first
    ended = normalize(previous).rstrip().endswith((".", "!", "?", ")", '"'))
    return first if sentence_style and not ended else None


def reference_back(text: str) -> str | None:
    """The words by which a bullet refers to something only another bullet names."""
    tokens = words(text)
    if not tokens:
        return None
    has = set(tokens)
    for word, partner in (("either", "or"), ("neither", "nor"), ("both", "and")):
        if word in has and partner not in has:
            return word
    if tokens[0] in _LEADING_REFERENCES:
        return " ".join(tokens[:2])
    for i, word in enumerate(tokens[:-1]):
        following = tokens[i + 1]
        if word in {"this", "these", "those", "such"} and following not in _DEICTIC_NOUNS:
            return f"{word} {following}"
        if word == "that" and following in _ANAPHORIC_NOUNS:
            return f"{word} {following}"
    found = _DEFINITE_REFERENCE.search(" ".join(tokens))
    if found:
        return found.group(0)
    for i, word in enumerate(tokens):
        if word in _PRONOUNS:
            content = [
                t
                for t in tokens[:i]
                if t not in _STOPWORDS and t not in OUTPUT_WORDS and t not in _AUXILIARIES
            ]
            if len(content) <= 1:
                return word
    return None


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
    for i, word in enumerate(tokens):
        if word in _VERBS:
            return True
        if word in _NOUN_VERBS and i > 0 and tokens[i - 1] in _SUBJECT_NOUNS:
            return True
    return False
