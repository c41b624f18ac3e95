"""Secrets out of messages: a judge server that echoes the request (its Authorization header,
the API key) into an error body must not put the key into the terminal, JUnit XML, the review
file or the results file.

Redacted: the values of the configured keys (``OPENAI_API_KEY``, ``LLMJUDGE_API_KEY``,
``ANTHROPIC_API_KEY``) and of every environment variable whose name ends in ``_API_KEY`` or
``_TOKEN`` (8 characters or more), wherever they appear, plus anything shaped like a key
(``sk-…``) or a bearer credential (``Bearer …``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

REDACTED = "[redacted]"
_NAMED = ("OPENAI_API_KEY", "LLMJUDGE_API_KEY", "ANTHROPIC_API_KEY")
_SUFFIXES = ("_API_KEY", "_TOKEN")
_MIN_LENGTH = 8
_PATTERNS = (
    re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(?<=\bbearer )[^\s\"',;}]+"),
)


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
    return sorted(found, key=len, reverse=True)


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret value and key-shaped string replaced by ``[redacted]``."""
    for value in secrets(env):
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(REDACTED, text)
    return text
