"""Verdicts read from judges' free text: formats, reasoning blocks, and every way it can fail."""

from __future__ import annotations

import pytest

from pytest_llmjudge.judging.verdict import Verdict
from pytest_llmjudge.judging.verdict_text import ParsedVerdict, parse_verdict, strip_reasoning


def read(text: str, **kwargs: str) -> tuple[str | None, bool | None, str | None]:
    """(format, passed, error type) of ``parse_verdict(text)``."""
    parsed = parse_verdict(text, **kwargs)
    assert (parsed.verdict is None) == (parsed.error is not None), parsed
    assert parsed.ok == (parsed.verdict is not None)
    passed = None if parsed.verdict is None else parsed.verdict.passed
    return parsed.format, passed, None if parsed.error is None else parsed.error.type


READABLE = {
    # JSON
    "plain json": ('{"pass": true, "reason": "lists both drugs"}', "json", True),
    "json fail": ('{"reason": "omits aspirin", "pass": false}', "json", False),
    "json after prose": ('Aspirin only.\n{"pass": false, "reason": "no NTG"}', "json", False),
    "json on the last line": (
        'Step 1: check drugs.\nStep 2: compare.\n{"pass": true, "reason": "complete"}',
        "json",
        True,
    ),
    "json with trailing prose": ('{"pass": true, "reason": "ok"}\nHope this helps!', "json", True),
    "last json object wins": (
        '{"pass": true, "reason": "first try"}\nWait, re-checking.\n{"pass": false, "reason": "missing"}',
        "json",
        False,
    ),
    "json ignores unrelated objects": ('Dose {"mg": 5}.\n{"pass": true, "reason": "right"}', "json", True),
    "json verdict label": ('{"verdict": "FAIL", "reason": "wrong"}', "json", False),
    "json passed key": ('{"passed": "yes", "reason": "fine"}', "json", True),
    "json pass as 1": ('{"pass": 1, "reason": "fine"}', "json", True),
    "json pass as string": ('{"pass": "false", "reason": "no"}', "json", False),
    "json explanation key": ('{"pass": true, "explanation": "fine"}', "json", True),
    "json with braces in prose": ("Use {curly} braces?\n" + '{"pass": true, "reason": "ok"}', "json", True),
    # fenced JSON
    "fenced json": ('```json\n{"pass": false, "reason": "missing aspirin"}\n```', "fenced_json", False),
    "fenced without language": ('```\n{"pass": true, "reason": "ok"}\n```', "fenced_json", True),
    "fenced after prose": (
        'Compared.\n```json\n{"pass": true, "reason": "same"}\n```\nDone.',
        "fenced_json",
        True,
    ),
    "last fence wins": (
        '```json\n{"pass": true, "reason": "a"}\n```\nNo:\n```json\n{"pass": false, "reason": "b"}\n```',
        "fenced_json",
        False,
    ),
    # YAML
    "yaml": ("pass: true\nreason: all medications present\nconfidence: low", "yaml", True),
    "yaml fenced": ("```yaml\npass: false\nreason: dose changed\n```", "yaml", False),
    "yaml yes/no": ("pass: no\nreason: flipped negation", "yaml", False),
    "yaml label with reason": ("Verdict: FAIL\nReason: missing data", "yaml", False),
    "python dict reads as yaml": ("{'pass': True, 'reason': 'ok'}", "yaml", True),
    # key-values
    "markdown key-values": (
        "My assessment.\n**Pass**: false\n**Reason**: wrong: totally",
        "key_value",
        False,
    ),
    "equals key-values": ("pass = true\nreason = fine", "key_value", True),
    "bulleted key-values": ("Assessment follows:\n- pass: true\n- reason: it is: fine", "key_value", True),
    # XML
    "xml": ("<pass>true</pass>\n<reason>Right answer</reason>", "xml", True),
    "xml wrapped": ("<verdict><pass>false</pass><reason>Wrong</reason></verdict>", "xml", False),
    "xml with score": ("<pass>true</pass><reason>ok</reason><score>0.5</score>", "xml", True),
    # words
    "single word": ("PASS", "words", True),
    "single word fail": ("**FAIL**", "words", False),
    "labeled word": ("The candidate omits aspirin.\nFinal answer: FAIL", "words", False),
    "lowercase label": ("verdict - pass", "words", True),
    "label without reason is words": ("Verdict: PASS", "words", True),
    "last label wins": ("Verdict: PASS\nOn reflection...\nVerdict: FAILED", "words", False),
    "shouted word": ("All facts match, so this is a PASS.", "words", True),
    "solo line beats a shouted word in prose": ("The other rubric would FAIL it.\nPASS", "words", True),
}


@pytest.mark.parametrize(("text", "fmt", "passed"), READABLE.values(), ids=READABLE.keys())
def test_reads_verdict(text: str, fmt: str, passed: bool) -> None:
    assert read(text) == (fmt, passed, None)


REASONING = {
    "closed think before json": (
        '<think>{"pass": false}</think>\n{"reason": "ok", "pass": true}',
        "json",
        True,
    ),
    "closed reasoning before word": (
        '<reasoning>\n1.\n  decision="not_support"\n</reasoning>\nFAIL',
        "words",
        False,
    ),
    "thinking tag": ("<thinking>PASS? no.</thinking>\nFAIL", "words", False),
    "upper-case tags": ("<THINK>FAIL</THINK> PASS", "words", True),
    "orphan closing tag (opening tag in the template)": (
        'Hmm, FAIL maybe...</think>\n{"pass": true, "reason": "x"}',
        "json",
        True,
    ),
    "unclosed block after the answer": ('{"pass": true, "reason": "ok"}\n<think>but then', "json", True),
    "two closed blocks": ("<think>a</think>PASS<reasoning>FAIL</reasoning>", "words", True),
    "reasoning with attributes": ('<think type="long">FAIL</think>PASS', "words", True),
}


@pytest.mark.parametrize(("text", "fmt", "passed"), REASONING.values(), ids=REASONING.keys())
def test_strips_reasoning_first(text: str, fmt: str, passed: bool) -> None:
    assert read(text) == (fmt, passed, None)


UNREADABLE = {
    "empty": ("", "empty"),
    "blank": ("  \n\t ", "empty"),
    "only reasoning": ("<think>PASS</think>", "empty"),
    "unclosed think": ("<think>I am still thinking about whether it should PASS", "truncation"),
    "unclosed reasoning": ("<reasoning>\n1.\n  nugget=", "truncation"),
    "truncated json string": ('{"reason": "the output lists asp', "truncation"),
    "truncated json after key": ('{"reason": "x", "pass"', "truncation"),
    "truncated json value": ('{"reason": "x", "pass": tr', "truncation"),
    "truncated json after prose": ('Checked.\n{"pass": false, "reason": "miss', "truncation"),
    "truncated fenced json": ('```json\n{"pass": false, "reason": "missing asp', "truncation"),
    "verdict then a truncated retry": ('{"pass": true, "reason": "a"}\nNo:\n{"pass": fal', "truncation"),
    "truncated nested json": ('{"scores": {"a": 1}, "reason": "x', "truncation"),
    "truncated xml": ("<reason>ok</reason><pass>tr", "truncation"),
    "json without pass": ('{"reason": "looks fine"}', "missing_field"),
    "json without reason": ('{"pass": true}', "missing_field"),
    "yaml without reason": ("pass: true\nscore: 1", "missing_field"),
    "xml without reason": ("<pass>false</pass>", "missing_field"),
    "fenced json that is broken": ('```json\n{"pass": true "reason": "x"}\n```', "format_error"),
    "fenced json array": ('```json\n["support"]\n```', "format_error"),
    "pass is not a boolean": ('{"pass": "maybe", "reason": "x"}', "invalid_value"),
    "pass is a number": ('{"pass": 2, "reason": "x"}', "invalid_value"),
    "score is a word": ('{"pass": true, "reason": "x", "score": "high"}', "invalid_value"),
    "score is a boolean": ('{"pass": true, "reason": "x", "score": true}', "invalid_value"),
    "unknown confidence": ('{"pass": true, "reason": "x", "confidence": "very"}', "invalid_value"),
    "uncertain is not a boolean": ('{"pass": true, "reason": "x", "uncertain": "perhaps"}', "invalid_value"),
    "contradictory words": ("The output would PASS the first check but FAIL the second.", "contradiction"),
    "contradictory solo lines": ("PASS\nFAIL", "contradiction"),
    "no verdict at all": ("I am not sure what to say.", "format_error"),
    "lower-case words in prose are not a verdict": ("it does not pass, i think", "format_error"),
}


@pytest.mark.parametrize(("text", "error"), UNREADABLE.values(), ids=UNREADABLE.keys())
def test_unreadable_answer_gives_error_not_fail(text: str, error: str) -> None:
    assert read(text) == (None, None, error)
    parsed = parse_verdict(text)
    assert parsed.error is not None and parsed.error.message
    assert str(parsed.error).startswith(f"{error}: ")


def test_all_fields() -> None:
    text = '{"pass": true, "reason": " cites both ", "score": "0.75", "confidence": "HIGH", "uncertain": 1}'
    assert parse_verdict(text) == ParsedVerdict(
        Verdict(passed=True, reason="cites both", score=0.75, confidence="high", uncertain=True), "json"
    )


def test_absent_optional_fields() -> None:
    verdict = parse_verdict('{"pass": false, "reason": "x", "score": null}').verdict
    assert verdict == Verdict(passed=False, reason="x", score=None, confidence=None, uncertain=False)


def test_xml_fields_are_typed() -> None:
    text = "<pass>yes</pass><reason>ok</reason><score>1</score><confidence>medium</confidence>"
    assert parse_verdict(text).verdict == Verdict(True, "ok", 1.0, "medium", False)


def test_words_reason_is_the_whole_answer_collapsed() -> None:
    verdict = parse_verdict("The candidate omits aspirin.\n\nFinal answer:   FAIL").verdict
    assert verdict is not None
    assert verdict.reason == "The candidate omits aspirin. Final answer: FAIL"


def test_words_reason_is_capped() -> None:
    verdict = parse_verdict("word " * 1000 + "\nPASS").verdict
    assert verdict is not None and len(verdict.reason) == 1000


@pytest.mark.parametrize(
    "text", ['{"reason": "x", "pass"', "The answer is", '{"reason": "ok"}'], ids=["json", "prose", "missing"]
)
def test_length_finish_reason_turns_failures_into_truncation(text: str) -> None:
    assert read(text, finish_reason="length") == (None, None, "truncation")


def test_length_finish_reason_keeps_a_complete_verdict() -> None:
    assert read('{"pass": true, "reason": "ok"}', finish_reason="length") == ("json", True, None)


def test_length_finish_reason_keeps_value_errors() -> None:
    assert read('{"pass": "maybe", "reason": "x"}', finish_reason="length") == (None, None, "invalid_value")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>a</think> answer", ("answer", False)),
        ("before <think>a", ("before", True)),
        ("a</think>b</reasoning> c", ("c", False)),
        ("<think> a <think> b </think> c </think> d", ("d", False)),
        ("no tags", ("no tags", False)),
        ("<Reasoning>\nx\n</Reasoning>\nlast line", ("last line", False)),
    ],
)
def test_strip_reasoning(text: str, expected: tuple[str, bool]) -> None:
    assert strip_reasoning(text) == expected
