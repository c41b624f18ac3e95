"""A text verdict's edge cases, each as the user sees it: the exact error a judge's answer gets
(the failure text quotes it), and the verdict read from fences, XML, key-value lines and JSON
objects among others. (``test_verdict_text.py`` covers the formats themselves.)"""

from __future__ import annotations

import pytest

from pytest_llmjudge.judging.verdict_text import ParseError, parse_verdict


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (None, ("empty", "the judge returned no text")),
        ("", ("empty", "the judge returned no text")),
        ("  \n ", ("empty", "the judge returned no text")),
        ("<think>weighing it</think>", ("empty", "the judge returned only reasoning, no answer")),
        ("<think>weighing it", ("truncation", "the answer ended inside an unclosed reasoning block")),
        (
            '```json\n{"pass": true, "reason": "r",, }\n```',
            (
                "format_error",
                "the JSON verdict does not parse: Expecting property name enclosed in double quotes: "
                "line 1 column 30 (char 29)",
            ),
        ),
        ('{"reason": "fine"}', ("missing_field", "the verdict has no 'pass' field")),
        ('{"pass": true}', ("missing_field", "the verdict has no 'reason' field")),
        ("<reason>fine</reason><pass>tr", ("truncation", "the XML verdict is cut off inside <pass>")),
        ("<REASON>fine</REASON><PASS>tr", ("truncation", "the XML verdict is cut off inside <pass>")),
        (
            '{"pass": true, "reason": "r", "uncertain": "maybe"}',
            ("invalid_value", "'uncertain' must be true or false, got 'maybe'"),
        ),
        (
            "PASS\nFAIL",
            ("contradiction", "both PASS and FAIL appear on lines of their own, with no verdict label"),
        ),
        (
            "first it looks like a PASS, then a FAIL",
            ("contradiction", "both PASS and FAIL appear in the answer, with no verdict label"),
        ),
        (
            '```json\n{"pass": true, "reason": "r", "score": nu',
            ("truncation", "the JSON verdict is cut off: Expecting value"),
        ),
        (
            "reason: it reads fine",
            ("format_error", "no verdict found: no JSON, YAML, XML, 'pass:' field or PASS/FAIL word"),
        ),
    ],
)
def test_an_unreadable_answer_gets_its_exact_error(text: str | None, error: tuple[str, str]) -> None:
    parsed = parse_verdict(text)
    assert (parsed.verdict, parsed.error) == (None, ParseError(*error))  # type: ignore[arg-type]


def read(text: str) -> tuple[str | None, bool, str, bool]:
    parsed = parse_verdict(text)
    assert parsed.verdict is not None, parsed.error
    return parsed.format, parsed.verdict.passed, parsed.verdict.reason, parsed.verdict.uncertain


@pytest.mark.parametrize(
    ("text", "read_as"),
    [
        # a fenced object indented inside its fence, and one holding a nested object
        ('```json\n  {"pass": false, "reason": "off"}\n```', ("fenced_json", False, "off", False)),
        (
            '```json\n{"pass": true, "reason": "r", "detail": {"a": 1}}\n```',
            ("fenced_json", True, "r", False),
        ),
        # the last verdict-like object among others, past an object that does not parse
        ('{"a": 1} {"pass": false, "reason": "first"} {"b": {"c": 2}}', ("json", False, "first", False)),
        ('note {oops} {"pass": true, "reason": "r"} and {broken', ("json", True, "r", False)),
        ('{{"pass": true, "reason": "r"}', ("json", True, "r", False)),
        # XML tags in any case, a value over several lines, uncertainty
        ("<PASS>true</PASS><REASON>all good</REASON>", ("xml", True, "all good", False)),
        (
            "<pass>false</pass><reason>line one\nline two</reason>",
            ("xml", False, "line one\nline two", False),
        ),
        (
            "<pass>false</pass><reason>unsure</reason><uncertain>true</uncertain>",
            ("xml", False, "unsure", True),
        ),
        # key-value lines: quotes and emphasis around keys and values are not part of them
        ('pass: true\nreason: "fine"', ("yaml", True, "fine", False)),
        ("- pass: 'yes'\n- reason: 'quoted'", ("key_value", True, "quoted", False)),
        ("**Pass**: *true*\n**Reason**: fine", ("key_value", True, "fine", False)),
        ('__pass__ = "false"\nreason = it breaks', ("key_value", False, "it breaks", False)),
        # a lone reason line is words, not fields: the PASS word decides
        ("reason: it reads fine\nPASS", ("words", True, "reason: it reads fine PASS", False)),
        # a boolean in backticks, emphasis or quotes, with a full stop
        ('{"pass": "`True`.", "reason": "r"}', ("json", True, "r", False)),
        ('{"pass": "*no*", "reason": "r"}', ("json", False, "r", False)),
        ('{"**pass**": true, "_reason_": "r"}', ("json", True, "r", False)),
    ],
)
def test_a_verdict_is_read_from(text: str, read_as: tuple[str, bool, str, bool]) -> None:
    assert read(text) == read_as


def test_a_cut_off_answer_at_the_token_limit_says_so() -> None:
    parsed = parse_verdict('{"reason": "fine"}', finish_reason="length")
    assert parsed.error == ParseError(
        "truncation", "the answer was cut off at the token limit (the verdict has no 'pass' field)"
    )
