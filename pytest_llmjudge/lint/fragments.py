"""Which "Automatic fail" bullets are fragments of one condition split across bullets.

Under "any of the following" each bullet fails the case on its own, so a bullet that cannot be
a failure on its own is a fragment of a neighbour. The evidence, strongest first:

- a continuation: the bullet starts with "and"/"but", a subordinate clause with no main clause
  ("Unless the narrative …."), a relative pronoun, or lowercase after an unfinished sentence;
  or its predecessor ends on a comma or a conjunction;
- a back-reference whose antecedent is only in another bullet: "that medication" where another
  bullet names the medication, "this information", "the gap" with no gap in the bullet, "it"
  with nothing before it, "either" or "both" with no pair;
- a statement about the inputs (narrative, ground truth) that describes no output failure;
- an absence that only qualifies another bullet: "No clarification is given.".

Strong evidence makes LJ001 findings; weaker signs (a bullet that opens with "or"/"also", ends
on ";", or names "this protocol" that no bullet introduced) make the opt-in LJ004's. Bullets
are read without their domain prefix ("Stroke: …"), parentheticals and quoted text, where
"this" and "these" belong to an example, not to a neighbouring bullet.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .logic import AUXILIARIES, OUTPUT_WORDS, STOPWORDS, mentions_output, normalize, verb_count, words
from .references import (
    FAILING,
    FAILURE_WORDS,
    INPUT_WORDS,
    META,
    NEGATIONS,
    PREFIX,
    SHOWN_AS,
    BulletWords,
    read_bullet,
    reference,
)


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# What a field of the output is left as: "the age field is left 'unknown'", "set to none".
_STATE_WORDS = _set("blank empty null unknown unpopulated populated filled unfilled left set coded defaulted")
# Nouns that name a part of the output: "the GCS field reads 15", "the medication list lacks it".
_OUTPUT_PARTS = _set(
    "field fields entry entries section box form list record report documentation recorded documented "
    "charted entered logged listed captured coded"
)
# "The destination is named in the ground truth": a passive whose agent is an input.
_FOUND_IN_INPUTS = re.compile(
    r"^(?:\w+ ){1,5}(?:is|are|was|were) (?:\w+ly )?(?:named|listed|documented|recorded|stated|given"
    r"|mentioned|described|noted|present|available|reported) (?:in|by) (?:the )?(?:narrative|ground truth"
    r"|source|transcript|reference|chart|case)\b"
)
_CLAUSE_BREAK = re.compile(
    r",|;|\b(?:and|but|yet|although|though|while|whereas|despite|without|because|so|when|where|if|unless)\b"
)
_OPENERS = _set("and but nor plus & and/or")
_OPENING_PHRASES = ("as well as ", "along with ", "together with ", "in addition to ")
_WEAK_OPENERS = _set("or also additionally furthermore moreover then otherwise yet")
_SUBORDINATORS = _set(
    "unless although though whereas while except despite without because since if when even once given "
    "provided"
)
_RELATIVES = _set("which where whose who whom that")
_STRONG_TRAILING_WORDS = _set(
    "and but with where when if unless because that which while whereas although though plus as than "
    "despite without whose who even since"
)
_WEAK_TRAILING_WORDS = _set("or nor and/or")
_ARTICLES = _set("the a an any each every no its their this that these those some")
_ABSENCE_FILLER = _set(
    "given provided made offered included stated added there any further additional explicit explicitly "
    "clear clearly such same issue difference gap discrepancy conflict mismatch change ambiguity omission "
    "error problem it this that these those is are was were be been being whatsoever"
)


@dataclass(frozen=True)
class Split:
    """Consecutive bullets that read as one condition, and why."""

    members: tuple[int, ...]
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class _Cue:
    link: tuple[int, int]  # the two neighbouring bullets it joins
    reason: str
    strong: bool


def find_splits(
    texts: Sequence[str], lines: Sequence[int], grouped: Sequence[bool]
) -> tuple[list[Split], list[Split]]:
    """``(strong, weak)``: splits on strong evidence (LJ001), and on weaker signs among the other
    bullets (LJ004)."""
    bullets = [read_bullet(text, own) for text, own in zip(texts, grouped, strict=True)]
    cues = list(_cues(bullets, lines))
    strong = _splits([c for c in cues if c.strong], len(bullets))
    taken = {i for split in strong for i in split.members}
    weak_cues = [c for c in cues if not c.strong and not taken.intersection(c.link)]
    return strong, _splits(weak_cues, len(bullets))


def _splits(cues: list[_Cue], count: int) -> list[Split]:
    """Runs of consecutive bullets joined by cues (cues only join neighbours)."""
    joined = {c.link[0] for c in cues}
    splits, start = [], 0
    for i in range(count):
        if i not in joined:
            if i > start:
                members = tuple(range(start, i + 1))
                reasons = tuple(dict.fromkeys(c.reason for c in cues if c.link[0] in members))
                splits.append(Split(members, reasons))
            start = i + 1
    return splits


def _cues(bullets: list[BulletWords], lines: Sequence[int]) -> Iterator[_Cue]:
    sentence_style = any(b.text.endswith((".", "!", "?")) for b in bullets)
    all_lowercase = all(b.text[:1].islower() for b in bullets)
    semicolon_style = all(b.text.endswith(";") for b in bullets[:-1])  # "- A;\n- B;\n- C."
    last = len(bullets) - 1
    for i, bullet in enumerate(bullets):
        line = lines[i]
        before = (i - 1, i) if i else (0, 1)
        opener = _opener(bullet, bullets[i - 1] if i else None, sentence_style, all_lowercase)
        if i and opener:
            yield _Cue(before, f"line {line} starts with '{opener[0]}'", opener[1])
        closer = _closer(bullet.text) if i < last else None
        if closer and not (closer[0] == ";" and semicolon_style):
            yield _Cue((i, i + 1), f"line {line} ends on '{closer[0]}'", closer[1])
        if opener and i:
            continue
        refers = reference(
            bullet, [b for j, b in enumerate(bullets) if j != i], bullets[i - 1] if i else None
        )
        if refers:
            yield _Cue(before, f"line {line} refers back with '{refers[0]}'", refers[1])
        elif input_only(bullet.text):
            yield _Cue(
                _input_link(bullets, i), f"line {line} only describes the inputs, not the output", True
            )
        elif absence_only(bullet):
            yield _Cue(before, f"line {line} states an absence that is no failure on its own", True)


def _opener(
    bullet: BulletWords, previous: BulletWords | None, sentence_style: bool, all_lowercase: bool
) -> tuple[str, bool] | None:
    """The word a bullet continues its predecessor with, and whether that is strong evidence."""
    lowered = bullet.core.lower()
    if lowered.startswith(("&", "+")):
        return lowered[0], True
    for phrase in _OPENING_PHRASES:
        if lowered.startswith(phrase):
            return phrase.strip(), True
    first = bullet.tokens[0] if bullet.tokens else ""
    lowercase = bullet.text[:1].islower() and not bullet.prefixed
    if first in _OPENERS:
        return first, True
    if first in _WEAK_OPENERS:
        return first, False
    if lowercase and first in _RELATIVES:
        return first, True
    if first in _SUBORDINATORS:
        # "Unless the narrative documents it." has no main clause; "If X, the output Y." has one.
        main_clause = "," in bullet.core or verb_count(list(bullet.tokens)) > 1
        return None if main_clause else (first, True)
    unfinished = previous is not None and not previous.text.endswith((".", "!", "?", ")", '"', "'"))
    if lowercase and sentence_style and not all_lowercase and unfinished:
        return first, True
    return None


def _closer(text: str) -> tuple[str, bool] | None:
    """The conjunction or punctuation a bullet ends on, if it leaves its sentence open."""
    if text.endswith((".", "!", "?")):
        return None
    if text.endswith((",", ":", "—", "–", "-", "&", "+")):
        return text[-1], True
    if text.endswith(";"):
        return ";", False
    last = text.split()[-1].lower().strip("\"')") if text.split() else ""
    if last in _STRONG_TRAILING_WORDS:
        return last, True
    if last in _WEAK_TRAILING_WORDS:
        return last, False
    return None


def input_only(text: str) -> bool:
    """True when the bullet states a fact about the inputs (narrative, ground truth, case) only:
    an input is its subject, and it names no output, no failure, and no field left blank."""
    whole = normalize(text)
    prefix = PREFIX.match(whole)
    tokens = words(whole[prefix.end() :] if prefix else whole)
    lowered = " ".join(tokens)
    about_inputs = _names_input(_subject(tokens)) or _FOUND_IN_INPUTS.search(lowered)
    if not about_inputs or mentions_output(whole) or SHOWN_AS.search(lowered):
        return False
    if any(w in FAILURE_WORDS for w in tokens):
        return False
    for clause in _CLAUSE_BREAK.split(whole.lower()):
        clause_words = words(clause)
        if not _names_input(clause_words) and set(clause_words) & (_STATE_WORDS | _OUTPUT_PARTS | FAILING):
            return False  # "… but the age field is left unknown"
    return True


def _names_input(tokens: Sequence[str]) -> bool:
    return any(w in INPUT_WORDS for w in tokens) or "ground truth" in " ".join(tokens)


def _subject(tokens: list[str]) -> list[str]:
    """The words before the first verb: "the ground truth" in "The ground truth lists …"."""
    for k, word in enumerate(tokens):
        participle = len(word) > 4 and word.endswith("ed") and k > 0 and tokens[k - 1] not in _ARTICLES
        if word in _RELATIVES or word in _SUBORDINATORS or participle:  # "a medication given in …"
            return tokens[:k]
        if verb_count(tokens[: k + 1]) > verb_count(tokens[:k]):
            return tokens[:k]
    return tokens


def absence_only(bullet: BulletWords) -> bool:
    """An absence with nothing of its own: "No clarification is given.", "The output does not flag
    the discrepancy." It only says something about another bullet's finding."""
    tokens = bullet.tokens
    if not any(t in NEGATIONS for t in tokens) or not any(t in META for t in tokens):
        return False
    ignorable = STOPWORDS | AUXILIARIES | OUTPUT_WORDS | NEGATIONS | META | _ABSENCE_FILLER
    return all(t in ignorable for t in tokens)


def _input_link(bullets: list[BulletWords], i: int) -> tuple[int, int]:
    """The neighbour a fact about the inputs qualifies: the next bullet when it is the first or the
    next refers back to it, else the previous one."""
    if i == 0:
        return 0, 1
    if i + 1 < len(bullets) and reference(bullets[i + 1], [bullets[i]], bullets[i]) is not None:
        return i, i + 1
    return i - 1, i
