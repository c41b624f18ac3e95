"""What a rubric bullet refers to and how it is worded, for ``fragments``.

A bullet is read without its domain prefix ("Stroke: …"), parentheticals and quoted text: a
"this" or "these" there belongs to an example, not to a neighbouring bullet. ``reference`` finds
the words by which a bullet points at something it does not name itself ("that medication",
"this information", "the gap", "it", "either"), and whether another bullet is the antecedent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .logic import AUXILIARIES, OUTPUT_WORDS, STOPWORDS, VERBS, normalize, words


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# "Stroke: ", "Cardiac arrest: ", "Ground truth: ": up to four words and a colon.
PREFIX = re.compile(r"^[A-Z][\w/&+'-]*(?: [\w/&+'-]+){0,3}:\s+(?=\S)")
_PARENTHETICAL = re.compile(r"\([^()]*\)")
_QUOTED = re.compile(r'"[^"]*"')

INPUT_WORDS = _set(
    "narrative narratives source transcript reference gold expected label labels case encounter patient "
    "context input inputs chart"
)
FAILURE_WORDS = _set(
    "missing omitted omits omit dropped drops added adds invented invents fabricated fabricates hallucinated "
    "hallucinates incorrect incorrectly wrong wrongly inaccurate misspelled misspells misattributed "
    "mislabeled reported extracted transcribed swapped duplicated truncated captured missed ignored lost "
    "misstated misreported altered changed flipped contradicted"
)
SHOWN_AS = re.compile(
    r"\b(?:appears?|reads?|shows?|shown|reported|listed|recorded|documented|charted|coded|entered|logged"
    r"|captured|classified|labell?ed|filled in|filled out) as\b"
)
_LEADING_REFERENCES = _set("it its they them their this that these those such said")
_DEMONSTRATIVES = _set("this these those that said")
_PRONOUNS = _set("it they them")
_PERSONAL = _set("it they them he she we you i its their his her our your one ones neither either both none")
_COMPLEMENTIZING = _set("such so given except now provided")
_DEICTIC = _set(
    "case encounter behavior behaviour rubric evaluation prompt patient judge task benchmark section list "
    "document note record transcript narrative output response trace run conversation call"
)
# Nouns that name whatever another bullet was about: "this information", "that value".
_GENERIC = _set(
    "value values information info data time times field fields finding findings detail details fact facts "
    "item items entry entries result results reading readings amount number gap discrepancy omission error"
)
_IDIOMS = re.compile(r"\b(?:at|by|from|until) (?:that|this) (?:time|point|moment|stage)\b")
_REFERRING_THE = re.compile(
    r"\bthe (?:above|former|latter|aforementioned)\b"
    r"|\bthe (?:previous|preceding|prior|above) (?:bullet|condition|item|one|point|finding)\b"
    r"|\b(?:as|mentioned|listed|stated|described) above\b"
)
_THE_PROBLEM = re.compile(
    r"\bthe (?:gap|discrepancy|omission|mismatch|difference|conflict|ambiguity|inconsistency|change|error"
    r"|issue|problem|deviation)\b"
)
# Words that introduce, inside the bullet, the problem that "the gap" or "the discrepancy" names.
_PROBLEM_WORDS = FAILURE_WORDS | _set(
    "blank empty null unknown silent lacks lack lacking absent conflicting conflict conflicts contradicts "
    "contradictory different differs differ disagree disagrees ambiguous unclear uncertain inconsistent two "
    "discrepancy mismatch omission gap versus vs change changes undocumented incomplete cannot"
)
FAILING = FAILURE_WORDS | _set(
    "wrong differs different differ contradicts contradict invents omits misses fails fail absent blank "
    "empty unknown duplicates twice instead mismatch"
)
NEGATIONS = _set("no not never without none nothing lacks lack fails failed")
# Saying something about another finding: "No clarification is given", "does not flag the gap".
META = _set(
    "clarification clarify clarifies clarified clarifying explanation explain explains explained "
    "explaining acknowledgment acknowledgement acknowledge acknowledges acknowledged acknowledging "
    "justification justify justifies rationale reason comment comments note notes noted noting flag flags "
    "flagged flagging caveat mention mentions mentioned mentioning indication indicate indicates "
    "reconciliation reconcile reconciled uncertainty remark address addresses addressed highlight "
    "highlights highlighted"
)


@dataclass(frozen=True)
class BulletWords:
    """A bullet's text read for its wording."""

    text: str  # normalised, whole
    core: str  # without domain prefix, parentheticals and quoted text
    tokens: tuple[str, ...]  # words of ``core``
    prefixed: bool
    grouped: bool  # joins conditions of its own (AND, clauses, sub-bullets)


def read_bullet(text: str, grouped: bool) -> BulletWords:
    """The bullet's words, once with and once without its prefix, parentheticals and quotes."""
    whole = normalize(text)
    prefix = PREFIX.match(whole)
    core = whole[prefix.end() :] if prefix else whole
    for _ in range(2):  # nested parentheses
        core = _PARENTHETICAL.sub(" ", core)
    core = " ".join(_QUOTED.sub(" ", core).split())
    return BulletWords(whole, core, tuple(words(core)), bool(prefix), grouped)


def reference(
    bullet: BulletWords, others: list[BulletWords], previous: BulletWords | None
) -> tuple[str, bool] | None:
    """Words by which the bullet refers to something it does not name itself, and whether that is
    strong evidence of a split."""
    tokens = bullet.tokens
    if not tokens:
        return None
    lowered = " ".join(tokens)
    pair = _unpaired(bullet)
    if pair:
        return pair, True
    if tokens[0] in _LEADING_REFERENCES and (len(tokens) == 1 or tokens[1] not in _DEICTIC):
        return " ".join(tokens[:2]), True
    found = _REFERRING_THE.search(lowered)
    if found:
        return found.group(0), True
    found = _THE_PROBLEM.search(lowered)
    if found and not _names_problem(lowered[: found.start()].split(), found.group(0).split()[1], bullet):
        return found.group(0), True
    weak: tuple[str, bool] | None = None
    for i, word in enumerate(tokens):
        if i and word in _DEMONSTRATIVES:
            reference = _demonstrative(bullet, i, others, previous)
            if reference and reference[1]:
                return reference
            weak = weak or reference
        if word in _PRONOUNS and not bullet.grouped and _content(tokens[:i]) <= 1:
            return word, True
    return weak


def _unpaired(bullet: BulletWords) -> str | None:
    """ "either" ending a clause ("… either."), or "either"/"neither"/"both" with no pair."""
    has = set(bullet.tokens)
    if re.search(r"\beither\s*(?:[.,;:!?]|$)", bullet.core.lower()):
        return "either"
    for word, partners in (("either", {"or"}), ("neither", {"nor"}), ("both", {"and", "or", "nor"})):
        if word in has and not partners & has:
            following = bullet.tokens[bullet.tokens.index(word) + 1 :][:1]
            if word != "both" or not following or following[0] in AUXILIARIES or following[0] in VERBS:
                return word
    return None


def _demonstrative(
    bullet: BulletWords, i: int, others: list[BulletWords], previous: BulletWords | None
) -> tuple[str, bool] | None:
    """``this X`` / ``that X`` whose X is named only in another bullet, or is a word such as "value"
    or "information" that stands for whatever another bullet named. Strong evidence unless both
    bullets are failures of their own ("… fails to capture a medication" / "… records these
    medications with the wrong route" are two failures about the same medications)."""
    tokens = bullet.tokens
    word = tokens[i]
    following = tokens[i + 1] if i + 1 < len(tokens) else ""
    if _IDIOMS.search(" ".join(tokens[i - 1 : i + 2])):
        return None
    if not following or following in AUXILIARIES or following in VERBS:
        if word == "that" or bullet.grouped or _content(tokens[:i]) > 1:
            return None
        return word, True  # "this is missing from the output"
    if following in _DEICTIC | INPUT_WORDS | OUTPUT_WORDS | {"ground"} or following in STOPWORDS:
        return None
    if not _nominal(following):
        return None
    if word == "that" and tokens[i - 1] in _COMPLEMENTIZING:
        return None  # "such that it crosses", "so that the total doubles"
    if word == "that" and (
        following.endswith("ed") or (following.endswith("s") and not following.endswith(("ss", "us", "is")))
    ):
        return None  # "a dose that exceeds", "a finding that changed": a relative clause
    if _singular(following) in {_singular(t) for t in tokens[:i]}:
        return None  # its antecedent is earlier in the same bullet
    phrase = f"{word} {following}"
    named = [o for o in others if _singular(following) in {_singular(w) for w in words(o.text)}]
    if not named and following not in _GENERIC:
        return None if word == "that" else (phrase, False)  # "that" mostly opens a relative clause
    antecedents = named or ([previous] if previous else [])
    return phrase, not _fails(bullet) or any(not _fails(a) for a in antecedents)


def _fails(bullet: BulletWords) -> bool:
    """Whether the bullet's own words describe a failure of the output."""
    tokens = set(words(bullet.text))
    return bool(tokens & FAILING) or bool(SHOWN_AS.search(" ".join(words(bullet.text))))


def _nominal(word: str) -> bool:
    return word.isalpha() and not {word} & (AUXILIARIES | VERBS | NEGATIONS | _PERSONAL)


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _content(tokens: Sequence[str]) -> int:
    return sum(t not in STOPWORDS and t not in OUTPUT_WORDS and t not in AUXILIARIES for t in tokens)


def _names_problem(before: list[str], noun: str, bullet: BulletWords) -> bool:
    """Whether the words before "the gap" / "the discrepancy" describe one, or the bullet (its
    domain prefix included) names it twice ("Protocol deviation: … the deviation")."""
    if words(bullet.text).count(noun) > 1:
        return True
    for i, word in enumerate(before):
        if word in _PROBLEM_WORDS:
            return True
        if word in {"no", "not", "never", "without"}:
            rest = [
                t
                for t in before[i + 1 : i + 4]
                if t not in AUXILIARIES and t not in {"any", "a", "an", "the"}
            ]
            if rest and rest[0] not in META:
                return True
    return False
