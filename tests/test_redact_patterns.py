"""Redaction at its edges: which environment values count as secrets, keys inside keys, the
forms a credential takes in a header, a URL or a JSON body, and text that only looks close."""

from __future__ import annotations

import base64

import pytest

from pytest_llmjudge.models.redact import REDACTED, clean_url, redact, secrets


def test_only_secret_variables_are_redacted() -> None:
    env = {"HOME": "/home/someone", "OPENAI_API_KEY": "sk-open-0123", "GITHUB_TOKEN": "ghp_01234567"}
    assert redact("home /home/someone, keys sk-open-0123 ghp_01234567", env) == (
        f"home /home/someone, keys {REDACTED} {REDACTED}"
    )


def test_a_secret_has_at_least_eight_characters() -> None:
    env = {"A_TOKEN": "12345678", "B_TOKEN": "1234567", "C_API_KEY": "       x"}
    assert redact("a 12345678 b 1234567 c", env) == f"a {REDACTED} b 1234567 c"
    assert secrets(env) == ["12345678"]


def test_a_key_inside_another_key_goes_whole_whatever_their_order() -> None:
    # sorted by length, not by name or value: the inner key sorts first alphabetically
    env = {"A_TOKEN": "aa-outer-zz-inner-123", "Z_TOKEN": "zz-inner-123"}
    assert redact("got aa-outer-zz-inner-123 and zz-inner-123", env) == f"got {REDACTED} and {REDACTED}"


def test_a_key_is_redacted_raw_and_percent_encoded() -> None:
    env = {"X_API_KEY": "ab/cd+ef123456"}
    assert redact("raw ab/cd+ef123456, in a URL ab%2Fcd%2Bef123456", env) == (
        f"raw {REDACTED}, in a URL {REDACTED}"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a bearer token without its header, in any case
        ("the server echoed Bearer abc.def-123", "the server echoed Bearer [redacted]"),
        ("BEARER abc.def-123 and bearer xyz.0123", "BEARER [redacted] and bearer [redacted]"),
        # any scheme after an Authorization header, not only Bearer and Basic
        ("Authorization: Token abcdef123", "Authorization: Token [redacted]"),
        ('"proxy-authorization": "Digest abc123def"', '"proxy-authorization": "Digest [redacted]"'),
        ("authorization=Bearer xyz12345", "authorization=Bearer [redacted]"),
        # a field that names a secret, in a body that mentions every other cue too
        (
            '{"password": "hunter2hunter2", "note": "key token secret"}',
            '{"password": "[redacted]", "note": "key token secret"}',
        ),
    ],
)
def test_credentials_after_their_names(text: str, expected: str) -> None:
    assert redact(text, {}) == expected


@pytest.mark.parametrize(
    "userinfo",
    [
        b"user:pw",  # unpadded: "dXNlcjpwdw"
        b"user:p>w?~~",  # URL-safe alphabet: "-" and "_"
    ],
)
def test_basic_credentials_in_any_base64(userinfo: bytes) -> None:
    token = base64.urlsafe_b64encode(userinfo).decode().rstrip("=")
    assert redact(f"Authorization: Basic {token}", {}) == "Authorization: Basic [redacted]"
    assert redact(f"sent basic {token} again", {}) == "sent basic [redacted] again"


@pytest.mark.parametrize(
    "text",
    [
        "basic dGV4dA",  # base64 of "text": no user:password in it
        "basic AAECAw",  # not printable once decoded
        "basic //79",  # not UTF-8 once decoded
    ],
)
def test_basic_that_is_not_a_credential_is_left_alone(text: str) -> None:
    assert redact(text, {}) == text


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # the parameter's name percent-encoded: only clean_url decodes it
        ("https://h/v1?api%2Dkey=K1&v=2", "https://h/v1?api%2Dkey=[redacted]&v=2"),
        # a value with '=' in it (base64 padding) goes whole
        ("https://h/v1?api%2Dkey=abc==&v=2", "https://h/v1?api%2Dkey=[redacted]&v=2"),
        ("https://h/v1?v=2&flag&x=1", "https://h/v1?v=2&flag&x=1"),
    ],
)
def test_a_url_keeps_no_secret_query_value(url: str, expected: str) -> None:
    assert clean_url(url) == expected
