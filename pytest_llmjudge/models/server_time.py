"""The time a judge's server says it spent on a call, beside the wall time the plugin saw.

OpenAI's API (and Azure's, and servers that copy it) answers every request with an
``openai-processing-ms`` header. The judge's HTTP transport (``response_cap``) notes it in the
``ServerTime`` of the call in progress, which ``timed_call`` makes for each judged case; the
difference from the call's wall time is what the plugin, the SDKs and the network added. A
server that does not say leaves it unknown, and the call is recorded with its wall time only.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

HEADER = "openai-processing-ms"


@dataclass
class ServerTime:
    """What the server said of each response of one call (its retries included)."""

    seconds: float = 0.0
    responses: int = 0
    unknown: bool = False  # a response did not say
    closed: bool = False  # a response said ``Connection: close`` (the next call opens a new one)

    @property
    def known(self) -> float | None:
        """Seconds the server spent on the call; None unless every response said."""
        return None if self.unknown or not self.responses else self.seconds


_CALL: ContextVar[ServerTime | None] = ContextVar("llmjudge_server_time", default=None)


@contextlib.contextmanager
def timed_call() -> Iterator[ServerTime]:
    """A ``ServerTime`` that the responses of the calls made inside (in this task, or tasks it
    starts) add to."""
    found = ServerTime()
    token = _CALL.set(found)
    try:
        yield found
    finally:
        _CALL.reset(token)


def note_response(headers: Mapping[str, str]) -> None:
    """Add a response's processing time to the call in progress, if one is being timed."""
    found = _CALL.get()
    if found is None:
        return
    found.responses += 1
    connection = headers.get("connection", "").lower().replace(" ", "").split(",")
    found.closed = found.closed or "close" in connection
    try:
        milliseconds = float(headers.get(HEADER, ""))
    except ValueError:
        found.unknown = True
        return
    if not math.isfinite(milliseconds) or milliseconds < 0:
        found.unknown = True
        return
    found.seconds += milliseconds / 1000


def note_seconds(seconds: float, responses: int, unknown: bool) -> None:
    """Add what another process's ``ServerTime`` noted for a request (the judge process) to the
    call in progress, if one is being timed."""
    found = _CALL.get()
    if found is None:
        return
    found.seconds += seconds
    found.responses += responses
    found.unknown = found.unknown or unknown
