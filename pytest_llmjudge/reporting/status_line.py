"""The live status line shown while pytest waits for a verdict: text, and when it is shown.

It is drawn after pytest's own progress on the current line (cursor saved, text, cursor
restored) and erased before pytest writes again, so pytest's output and its column count stay
exactly as they would be without it. Knows nothing of pytest: the session hands in the stream,
the line's geometry and a guard that suspends output capturing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import TextIO

from ..execution.scheduler import Progress

SAVE, RESTORE, ERASE_TO_END = "\x1b7", "\x1b8", "\x1b[K"
MIN_ROOM = 24
MIN_DONE_FOR_ETA = 5  # fewer completed calls tell no rate worth showing


def eta_seconds(progress: Progress, now: float) -> float | None:
    """Seconds until every judge call is done at the rate calls have completed so far."""
    if progress.started is None or progress.done < MIN_DONE_FOR_ETA or now <= progress.started:
        return None
    rate = progress.done / (now - progress.started)
    return (progress.total - progress.done) / rate


def duration(seconds: float) -> str:
    """``12s``, ``16m30s``, ``2h05m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def status_text(progress: Progress, room: int | None = None, now: float | None = None) -> str:
    """``judging 120/1000 · 32 in flight · 848 queued · 40 cached · 2 errors · ETA 12s``, cut to
    ``room``. The ETA shows once a few calls have completed (``now``: ``time.monotonic()``)."""
    p = progress
    parts = [
        f"judging {p.done}/{p.total}",
        f"{p.in_flight} in flight",
        f"{p.queued} queued",
        f"{p.cache_hits} cached",
        f"{p.errors} error{'' if p.errors == 1 else 's'}",
    ]
    eta = eta_seconds(p, time.monotonic() if now is None else now)
    if eta is not None:
        parts.append(f"ETA {duration(eta)}")
    text = " · ".join(parts)
    if room is not None and len(text) > room:
        text = text[: max(room - 1, 0)] + "…"
    return text


def wanted(is_tty: bool, environ: Mapping[str, str], verbosity: int, worker: bool) -> bool:
    """Whether to show the status line: an interactive terminal only, never in CI or a worker."""
    if worker or not is_tty or verbosity < -1:
        return False
    return not (environ.get("TERM") == "dumb" or environ.get("CI") or environ.get("PYTEST_XDIST_WORKER"))


class StatusLine:
    """Draws ``status_text`` to the right of the cursor while waiting; erases it on resuming."""

    def __init__(
        self,
        stream: TextIO,
        column: Callable[[], int],
        width: Callable[[], int],
        guard: Callable[[], AbstractContextManager[object]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._column = column
        self._width = width
        self._guard = guard or nullcontext
        self._clock = clock
        self._drawn = False

    def waiting(self, progress: Progress) -> None:
        with self._guard():
            # Measured with capturing suspended: while a test's output is captured the terminal
            # cannot be asked its width, and 80 columns are assumed.
            room = self._width() - self._column() - 3
            if room < MIN_ROOM:
                return
            self._write(f"{SAVE}  {status_text(progress, room, self._clock())}{ERASE_TO_END}{RESTORE}")
        self._drawn = True

    def resumed(self) -> None:
        if self._drawn:
            with self._guard():
                self._write(ERASE_TO_END)
            self._drawn = False

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()
