"""Redaction reads an environment that pytest's main thread changes while judge calls run."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping

import pytest

from pytest_llmjudge.judging.verdict import JudgeFailure
from pytest_llmjudge.models.redact import REDACTED, clean_url, redact, redact_command


class ChangingEnvironment(Mapping[str, str]):
    """Loses a variable while it is being read, the first time: what ``os.environ`` does when the
    main thread deletes PYTEST_CURRENT_TEST during a judge call on the judging thread."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.reads = 0

    def __getitem__(self, name: str) -> str:
        self.reads += 1
        if self.reads == 1 and name == "PYTEST_CURRENT_TEST":
            raise KeyError(name)
        return self.values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.values))

    def __len__(self) -> int:
        return len(self.values)


def test_a_variable_deleted_while_reading_does_not_break_redaction() -> None:
    env = ChangingEnvironment({"PYTEST_CURRENT_TEST": "x (setup)", "OPENAI_API_KEY": "abcd-1234-secret"})
    assert redact("HTTP 401: key abcd-1234-secret refused", env) == f"HTTP 401: key {REDACTED} refused"


def test_failures_made_on_another_thread_while_the_environment_changes() -> None:
    """A judge failure is built on the judging thread; the main thread keeps changing os.environ."""
    import os

    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            os.environ["LLMJUDGE_CHURN_TEST"] = "1"
            os.environ.pop("LLMJUDGE_CHURN_TEST", None)

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        for _ in range(2000):
            JudgeFailure("http-500", "server said no")
    finally:
        stop.set()
        thread.join()


# Secrets that are in no environment variable are found by their shape.
SHAPED = [
    ("Authorization: Basic dXNlcjpwdy0wMTIzNDU2Nzg5", "Authorization: Basic [redacted]"),
    (
        "header authorization: basic dXNlcjpwdy0wMTIzNDU2Nzg5 sent",
        "header authorization: basic [redacted] sent",
    ),
    ("basic dXNlcjpwdy0wMTIzNDU2Nzg5 alone", "basic [redacted] alone"),
    ("bearer abc.def-123 (lower case)", "bearer [redacted] (lower case)"),
    ("BEARER\tsk-abcdefghijk", "BEARER\t[redacted]"),
    ("key sk-proj-0123456789", "key [redacted]"),
    ("GET http://judge:pw-0123@127.0.0.1:80/v1 failed", "GET http://[redacted]@127.0.0.1:80/v1 failed"),
    ("https://host/v1?api-key=q-0123&v=2", "https://host/v1?api-key=[redacted]&v=2"),
    (
        "https://host/v1?v=2&access_token=abc&key=AIza123",
        "https://host/v1?v=2&access_token=[redacted]&key=[redacted]",
    ),
    ('{"api_key": "abcdefgh123"}', '{"api_key": "[redacted]"}'),
    ("password=hunter2hunter2", "password=[redacted]"),
]


@pytest.mark.parametrize(("text", "expected"), SHAPED)
def test_secret_shapes_are_redacted_without_the_environment(text: str, expected: str) -> None:
    assert redact(text, {}) == expected


@pytest.mark.parametrize(
    "text",
    [
        "a basic answer that is fine",
        "basic arithmetic holds",
        "max_tokens: 500 and a token limit",
        "see https://example.com/docs?page=2",
        "mail judge@example.com",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text, {}) == text


def test_nested_secrets_go_whole() -> None:
    env = {"OUTER_API_KEY": "outer-secret-INNER-abcdef", "INNER_TOKEN": "INNER-abcdef"}
    # a key containing another: the longer one goes whole, nothing of it is left
    assert redact("got outer-secret-INNER-abcdef and INNER-abcdef", env) == "got [redacted] and [redacted]"
    # a key inside a credential inside a URL, and a bearer token that is an environment key
    nested = "http://u:sk-nested-0123456789@h/v1?token=Bearer%20x and Authorization: Bearer INNER-abcdef"
    out = redact(nested, env)
    assert "sk-nested" not in out and "INNER" not in out and "Bearer%20x" not in out, out
    # an error body that nests the header in JSON
    body = '{"error": {"request": {"headers": {"authorization": "Basic dXNlcjpwdy0wMTIzNDU2Nzg5"}}}}'
    assert "dXNlcjpw" not in redact(body, {})
    # percent-encoded, as the key appears in a URL or a form body
    assert redact("k=ab%2Fcd%2Bef123456", {"X_API_KEY": "ab/cd+ef123456"}) == "k=[redacted]"


def test_redacting_twice_changes_nothing_more() -> None:
    for _, expected in SHAPED:
        assert redact(expected, {}) == expected


def test_a_url_label_keeps_no_credentials() -> None:
    assert clean_url("http://judge:pw@[::1]:8080/v1?api-key=K1&v=2&token=zz") == (
        "http://[::1]:8080/v1?api-key=[redacted]&v=2&token=[redacted]"
    )
    assert clean_url("https://host/v1") == "https://host/v1"


def test_a_command_line_is_recorded_without_credentials() -> None:
    args = [
        "pytest",
        "--llmjudge-base-url=http://u:pw-secret@h/v1?api-key=K9",
        "--llmjudge-base-url",
        "http://a:b@h",
    ]
    assert redact_command(args) == [
        "pytest",
        "--llmjudge-base-url=http://[redacted]@h/v1?api-key=[redacted]",
        "--llmjudge-base-url",
        "http://[redacted]@h",
    ]
