"""Secrets out of messages, labels and records: a judge server that echoes the request (its
Authorization header, the API key) into an error body or a verdict reason, or a base URL that
carries credentials, must not put them into the terminal, JUnit XML, the review, results or
cache files, or the HTML report.

Redacted: the values of the configured keys (``OPENAI_API_KEY``, ``LLMJUDGE_API_KEY``,
``ANTHROPIC_API_KEY``) and of every environment variable whose name ends in ``_API_KEY`` or
``_TOKEN`` (8 characters or more), wherever they appear (also percent-encoded), plus what is
shaped like a secret whether or not it is in the environment: ``sk-…`` keys, ``Bearer …`` and
``Basic …`` credentials (any case), the user and password of a URL (``http://user:pw@host``),
secret query values (``?api-key=…``, ``&token=…``) and ``api_key: …``-style pairs.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import urllib.parse
from collections.abc import Mapping, Sequence

REDACTED = "[redacted]"
_NAMED = ("OPENAI_API_KEY", "LLMJUDGE_API_KEY", "ANTHROPIC_API_KEY")
_SUFFIXES = ("_API_KEY", "_TOKEN")
_MIN_LENGTH = 8

_FRESH = r"(?!\[redacted\])"  # not a value redacted already
# A query parameter or field whose name says it holds a secret.
_SECRET_NAME = r"[\w.\-]*(?:key|token|secret|password|passwd|pwd|auth|signature|sig|credential)s?"
_SECRET_PARAM = re.compile(rf"(?i)^{_SECRET_NAME}$")
_USERINFO = re.compile(rf"(?i)\b([a-z][a-z0-9+.\-]*://){_FRESH}[^\s/?#@\"'<>]+@")
_QUERY_VALUE = re.compile(rf"(?i)([?&;]{_SECRET_NAME}=){_FRESH}[^&#\s\"'<>]+")
_FIELD_VALUE = re.compile(
    r"(?i)(\b[\w\-]*(?:api[_\-]?key|access[_\-]?token|secret|password|passwd)[\"']?\s*[:=]\s*[\"']?)"
    rf"{_FRESH}([^\s\"'&,;}}\]]{{6,}})"
)
_FIELD_CUES = ("key", "token", "secret", "passw")
_KEY = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{6,}")
_BEARER = re.compile(rf"(?i)(\bbearer\s+){_FRESH}[^\s\"',;}}\]]+")
_AUTHORIZATION = re.compile(
    rf"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?[a-z]+\s+){_FRESH}[^\s\"',;}}\]]+"
)
_BASIC = re.compile(r"(?i)(\bbasic\s+)([A-Za-z0-9+/_\-]{4,}={0,2})")


def _snapshot(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` taken while another thread may change it: messages are redacted on the
    judging thread while pytest's main thread sets and deletes PYTEST_CURRENT_TEST, and reading
    ``os.environ`` across such a change raised KeyError (a judge ERROR from nowhere)."""
    for _ in range(10):
        try:
            return dict(env.items())
        except (KeyError, RuntimeError):  # changed under us: read it again
            continue
    return {}


def secrets(env: Mapping[str, str] | None = None) -> list[str]:
    """The secret values of the environment, longest first (so a key containing another goes whole)."""
    env = _snapshot(os.environ if env is None else env)
    found = {
        value
        for name, value in env.items()
        if (name in _NAMED or name.upper().endswith(_SUFFIXES)) and len(value.strip()) >= _MIN_LENGTH
    }
    # the forms a value takes inside a URL or a form body (a key with '/' or '+' in it)
    found |= {urllib.parse.quote(value, safe="") for value in found}
    return sorted(found, key=len, reverse=True)


def _basic(match: re.Match[str]) -> str:
    """``Basic <base64 of user:password>``; the English word "basic" before a word is left alone."""
    token = match.group(2)
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_", validate=True)
        text = decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return match.group(0)
    if ":" not in text or not text.isprintable():
        return match.group(0)
    return match.group(1) + REDACTED


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret value and secret-shaped string replaced by ``[redacted]``."""
    for value in secrets(env):
        if value in text:
            text = text.replace(value, REDACTED)
    # each pattern only where its cue appears: a verdict reason rarely has any, and is redacted
    # once per case
    lower = text.lower()
    if "://" in text:
        text = _USERINFO.sub(rf"\g<1>{REDACTED}@", text)
    if "=" in text:
        text = _QUERY_VALUE.sub(rf"\g<1>{REDACTED}", text)
    if "authorization" in lower:
        text = _AUTHORIZATION.sub(rf"\g<1>{REDACTED}", text)
    if "bearer" in lower:
        text = _BEARER.sub(rf"\g<1>{REDACTED}", text)
    if "basic" in lower:
        text = _BASIC.sub(_basic, text)
    if any(cue in lower for cue in _FIELD_CUES):
        text = _FIELD_VALUE.sub(rf"\g<1>{REDACTED}", text)
    return _KEY.sub(REDACTED, text) if "sk-" in text else text


def clean_url(url: str) -> str:
    """``url`` as it may be shown and stored: no user or password, secret query values
    redacted (``http://u:pw@host/v1?api-key=K&v=2`` → ``http://host/v1?api-key=[redacted]&v=2``)."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = "&".join(
        f"{piece.partition('=')[0]}={REDACTED}"
        if "=" in piece and _SECRET_PARAM.match(urllib.parse.unquote(piece.partition("=")[0]))
        else piece
        for piece in parts.query.split("&")
    )
    return redact(urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))


def redact_command(args: Sequence[str]) -> list[str]:
    """A command line as the results file records it: each argument redacted."""
    return [redact(str(arg)) for arg in args]
