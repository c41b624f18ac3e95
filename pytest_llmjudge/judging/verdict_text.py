"""Read a verdict from a judge's free text, for judges without structured output.

Reasoning comes out first: closed ``<think>``/``<thinking>``/``<reasoning>`` blocks, an unclosed
one to the end of the text, and everything before a closing tag that has no opening one (chat
templates that open the block in the prompt). What remains is read as, in this order: fenced
JSON, JSON (the last verdict object in the text, so JSON after prose or on the last line
counts), XML tags, YAML, ``pass: true`` key-values, and finally PASS/FAIL words. The result says
which format was read, or why nothing could be: ``empty``, ``truncation``, ``format_error``,
``missing_field``, ``invalid_value`` or ``contradiction``. A text that cannot be read gives no
verdict, never a FAIL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from .verdict import Confidence, Verdict

Format = Literal["json", "fenced_json", "yaml", "key_value", "xml", "words"]
ErrorType = Literal["empty", "truncation", "format_error", "missing_field", "invalid_value", "contradiction"]


@dataclass(frozen=True)
class ParseError:
    type: ErrorType
    message: str

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


@dataclass(frozen=True)
class ParsedVerdict:
    """A verdict and the format it was read from, or the error that kept it from being read."""

    verdict: Verdict | None
    format: Format | None = None
    error: ParseError | None = None

    @property
    def ok(self) -> bool:
        return self.verdict is not None


_REASONING_TAGS = ("think", "thinking", "reasoning")
_TAG_ALTERNATIVES = "|".join(_REASONING_TAGS)
_CLOSED_BLOCK = re.compile(rf"<({_TAG_ALTERNATIVES})\b[^>]*>.*?</\1\s*>", re.I | re.S)
_OPEN_TAG = re.compile(rf"<({_TAG_ALTERNATIVES})\b[^>]*>", re.I)
_CLOSE_TAG = re.compile(rf"</({_TAG_ALTERNATIVES})\s*>", re.I)
_FENCE = re.compile(r"```[ \t]*(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)(?:```|\Z)", re.S)
_PASS_KEYS = ("pass", "passed", "pass_")
_LABEL_KEYS = ("verdict", "result", "decision")
_REASON_KEYS = ("reason", "reasoning", "rationale", "explanation", "justification")
_TRUE = {"true", "yes", "pass", "passed", "1"}
_FALSE = {"false", "no", "fail", "failed", "0"}
_XML_FIELD = r"<(?P<tag>{names})\b[^>]*>(?P<value>[^<]*)</(?P=tag)\s*>"
_KEY_VALUE = re.compile(
    r"^[ \t>*_\-]*\"?(?P<key>[A-Za-z_]+)\"?[*_]*[ \t]*[:=][ \t]*[*_]*(?P<value>.*?)[*_]*[ \t]*,?[ \t]*$", re.M
)
_WORD_PASS = r"PASS(?:ED|ES)?"
_WORD_FAIL = r"FAIL(?:ED|S)?"
_LABELED_WORD = re.compile(
    rf"\b(?:final\s+)?(?:verdict|answer|result|decision|grade|judg(?:e)?ment)\b[*_\s]*[:=\-]\s*[*_\"'`]*"
    rf"(?P<word>{_WORD_PASS}|{_WORD_FAIL})\b",
    re.I,
)
_SOLO_WORD = re.compile(
    rf"^[\s*_#>`\"'\[(]*(?P<word>{_WORD_PASS}|{_WORD_FAIL})[\s*_.!`\"'\])]*$", re.I | re.M
)
_SHOUTED_WORD = re.compile(rf"\b(?P<word>{_WORD_PASS}|{_WORD_FAIL})\b")
_NUMBER_PREFIX = re.compile(r"-?\d+\.?\d*(?:[eE][-+]?\d*)?")
_MAX_REASON = 1000
_CONFIDENCE_LEVELS: tuple[Confidence, ...] = ("high", "medium", "low")


class _Unreadable(Exception):
    def __init__(self, error_type: ErrorType, message: str) -> None:
        super().__init__(message)
        self.error = ParseError(error_type, message)


def strip_reasoning(text: str) -> tuple[str, bool]:
    """``text`` without reasoning blocks, and whether one was left unclosed (the answer inside it)."""
    text = _CLOSED_BLOCK.sub("", text)
    closing = list(_CLOSE_TAG.finditer(text))
    if closing:  # the opening tag was in the prompt: all before the last closing tag is reasoning
        text = text[closing[-1].end() :]
    opening = _OPEN_TAG.search(text)
    if opening:
        return text[: opening.start()].strip(), True
    return text.strip(), False


def parse_verdict(text: str | None, *, finish_reason: str | None = None) -> ParsedVerdict:
    """Read the judge's verdict from ``text``; ``finish_reason='length'`` marks a cut-off answer."""
    if text is None or not text.strip():
        return _failed("empty", "the judge returned no text")
    answer, unclosed = strip_reasoning(text)
    if not answer:
        if unclosed:
            return _failed("truncation", "the answer ended inside an unclosed reasoning block")
        return _failed("empty", "the judge returned only reasoning, no answer")
    try:
        verdict, used = _read(answer)
    except _Unreadable as exc:
        if finish_reason == "length" and exc.error.type in {"format_error", "missing_field"}:
            return _failed("truncation", f"the answer was cut off at the token limit ({exc.error.message})")
        return ParsedVerdict(None, None, exc.error)
    return ParsedVerdict(verdict, used)


def _failed(error_type: ErrorType, message: str) -> ParsedVerdict:
    return ParsedVerdict(None, None, ParseError(error_type, message))


def _read(answer: str) -> tuple[Verdict, Format]:
    fenced = _last_fence(answer)
    if fenced is not None:
        lang, body = fenced
        if lang in {"yaml", "yml"}:
            mapping = _yaml_mapping(body)
            if mapping is not None:
                return _verdict_from(mapping), "yaml"
        elif lang in {"json", "jsonc", ""} and body.lstrip().startswith("{"):
            return _verdict_from(_json_object(body)), "fenced_json"
    mapping = _last_json_verdict(answer)
    if mapping is not None:
        return _verdict_from(mapping), "json"
    mapping = _xml_fields(answer)
    if mapping is not None:
        return _verdict_from(mapping), "xml"
    mapping = _yaml_mapping(answer)
    if mapping is not None:
        return _verdict_from(mapping), "yaml"
    mapping = _key_values(answer)
    if mapping is not None:
        return _verdict_from(mapping), "key_value"
    return _verdict_from_words(answer), "words"


def _last_fence(answer: str) -> tuple[str, str] | None:
    fences = list(_FENCE.finditer(answer))
    if not fences:
        return None
    last = fences[-1]
    return last.group("lang").lower(), last.group("body")


def _json_object(body: str) -> dict[str, Any]:
    """The JSON object in a fenced block (one that starts with ``{``: what decodes is an object);
    a cut-off object is ``truncation``."""
    start = body.find("{")
    try:
        value: dict[str, Any] = json.JSONDecoder().raw_decode(body, start)[0]
    except json.JSONDecodeError as exc:
        if _ends_inside(body, exc):
            raise _Unreadable("truncation", f"the JSON verdict is cut off: {exc.msg}") from None
        raise _Unreadable("format_error", f"the JSON verdict does not parse: {exc}") from None
    return value


def _ends_inside(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether a JSON error comes from the text ending (in a string or literal), not a wrong character."""
    rest = text[exc.pos :].strip()
    return (
        not rest
        or exc.msg.startswith("Unterminated string")
        or any(literal.startswith(rest) for literal in ("true", "false", "null"))
        or _NUMBER_PREFIX.fullmatch(rest) is not None
    )


def json_candidates(answer: str) -> Iterator[tuple[int, dict[str, Any] | None, json.JSONDecodeError | None]]:
    """Each JSON object in ``answer`` from left to right, where it starts: the object, or the error
    that kept the text from ``{`` on from decoding (the next ``{`` is tried after it)."""
    decoder = json.JSONDecoder()
    position = answer.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(answer, position)
        except json.JSONDecodeError as exc:
            yield position, None, exc
            position = answer.find("{", position + 1)
            continue
        if isinstance(value, dict):
            yield position, value, None
        position = answer.find("{", end)


def _is_verdict_like(mapping: Mapping[str, Any]) -> bool:
    """Any verdict key: enough for JSON, whose objects are otherwise rare in an answer."""
    keys = {_normal_key(key) for key in mapping}
    return bool(keys & {*_PASS_KEYS, *_LABEL_KEYS, *_REASON_KEYS})


def _is_verdict_fields(mapping: Mapping[str, Any]) -> bool:
    """A pass field, or a label with a reason: a lone ``Verdict: PASS`` line is words, not fields."""
    keys = {_normal_key(key) for key in mapping}
    return bool(keys & set(_PASS_KEYS)) or bool(keys & set(_LABEL_KEYS) and keys & set(_REASON_KEYS))


def _last_json_verdict(answer: str) -> dict[str, Any] | None:
    """The last JSON object in ``answer`` that looks like a verdict.

    An object that the end of the text cuts off after it (or with none before it) is ``truncation``.
    """
    found: dict[str, Any] | None = None
    found_at = -1
    cut_off: tuple[int, json.JSONDecodeError] | None = None
    for position, value, error in json_candidates(answer):
        if value is not None and _is_verdict_like(value):
            found, found_at = value, position
        elif error is not None and '"' in answer[position:] and _ends_inside(answer, error):
            cut_off = cut_off or (position, error)
    if cut_off is not None and cut_off[0] > found_at:
        raise _Unreadable("truncation", f"the JSON verdict is cut off: {cut_off[1].msg}")
    return found


def _xml_fields(answer: str) -> dict[str, Any] | None:
    names = "|".join((*_PASS_KEYS, *_LABEL_KEYS, *_REASON_KEYS, "score", "confidence", "uncertain"))
    fields = {
        found.group("tag").lower(): found.group("value").strip()
        for found in re.finditer(_XML_FIELD.format(names=names), answer, re.I | re.S)
    }
    if not fields.keys() & {*_PASS_KEYS, *_LABEL_KEYS}:
        if re.search(rf"<({'|'.join(_PASS_KEYS)})\b[^>]*>[^<]*\Z", answer, re.I):
            raise _Unreadable("truncation", "the XML verdict is cut off inside <pass>")
        return None
    return fields


def _yaml_mapping(text: str) -> dict[str, Any] | None:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if isinstance(value, dict) and _is_verdict_fields(value):
        return {str(key): item for key, item in value.items()}
    return None


def _key_values(answer: str) -> dict[str, Any] | None:
    fields: dict[str, Any] = {}
    for found in _KEY_VALUE.finditer(answer):
        key = _normal_key(found.group("key"))
        fields[key] = found.group("value").strip().strip("\"'")
    return fields if _is_verdict_fields(fields) else None


def _normal_key(key: object) -> str:
    return str(key).strip().strip("*_").lower()


def _verdict_from(mapping: Mapping[str, Any]) -> Verdict:
    fields = {_normal_key(key): value for key, value in mapping.items()}
    passed = _first(fields, _PASS_KEYS)
    if passed is None:
        passed = _first(fields, _LABEL_KEYS)
    if passed is None:
        raise _Unreadable("missing_field", "the verdict has no 'pass' field")
    reason = _first(fields, _REASON_KEYS)
    if reason is None:
        raise _Unreadable("missing_field", "the verdict has no 'reason' field")
    return Verdict(
        passed=_boolean(passed, "pass"),
        reason=str(reason).strip(),
        score=_score(fields.get("score")),
        confidence=_confidence(fields.get("confidence")),
        uncertain=False if fields.get("uncertain") is None else _boolean(fields["uncertain"], "uncertain"),
    )


def _first(fields: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if fields.get(key) is not None:
            return fields[key]
    return None


def _boolean(value: Any, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    word = str(value).strip().strip("*_.\"'`").lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise _Unreadable("invalid_value", f"'{field}' must be true or false, got {value!r}")


def _score(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise _Unreadable("invalid_value", f"'score' must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise _Unreadable("invalid_value", f"'score' must be a number, got {value!r}") from None


def _confidence(value: Any) -> Confidence | None:
    if value is None or value == "":
        return None
    word = str(value).strip().lower()
    for level in _CONFIDENCE_LEVELS:
        if word == level:
            return level
    raise _Unreadable("invalid_value", f"'confidence' must be high, medium or low, got {value!r}")


def _verdict_from_words(answer: str) -> Verdict:
    """A verdict from PASS/FAIL words: a labeled one (``Verdict: PASS``), else a line of its own,
    else upper-case PASS/FAIL anywhere; different words with no label to decide are a contradiction.
    """
    reason = " ".join(answer.split())[:_MAX_REASON]
    labeled = list(_LABELED_WORD.finditer(answer))
    if labeled:
        return Verdict(passed=_is_pass(labeled[-1].group("word")), reason=reason)
    for pattern, where in ((_SOLO_WORD, "on lines of their own"), (_SHOUTED_WORD, "in the answer")):
        words = {_is_pass(found.group("word")) for found in pattern.finditer(answer)}
        if len(words) == 2:
            raise _Unreadable("contradiction", f"both PASS and FAIL appear {where}, with no verdict label")
        if words:
            return Verdict(passed=words.pop(), reason=reason)
    raise _Unreadable("format_error", "no verdict found: no JSON, YAML, XML, 'pass:' field or PASS/FAIL word")


def _is_pass(word: str) -> bool:
    return word.upper().startswith("PASS")
