"""The live status line shown while pytest waits for a verdict: text, and when it is shown.

It is drawn after pytest's own progress on the current line (cursor saved, text, cursor
restored) and erased before pytest writes again, so pytest's output and its column count stay
exactly as they would be without it. Knows nothing of pytest: the session hands in the stream,
the line's geometry and a guard that suspends output capturing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import TextIO

from ..judging.scheduler import Progress

SAVE, RESTORE, ERASE_TO_END = "\x1b7", "\x1b8", "\x1b[K"
MIN_ROOM = 24


def status_text(progress: Progress, room: int | None = None) -> str:
    """``judging 120/1000 · 32 in flight · 848 queued · 40 cached · 2 errors``, cut to ``room``."""
    p = progress
    parts = [
        f"judging {p.done}/{p.total}",
        f"{p.in_flight} in flight",
        f"{p.queued} queued",
        f"{p.cache_hits} cached",
        f"{p.errors} error{'' if p.errors == 1 else 's'}",
    ]
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
    ) -> None:
        self._stream = stream
        self._column = column
        self._width = width
        self._guard = guard or nullcontext
        self._drawn = False

    def waiting(self, progress: Progress) -> None:
        room = self._width() - self._column() - 3
        if room < MIN_ROOM:
            return
        self._emit(f"{SAVE}  {status_text(progress, room)}{ERASE_TO_END}{RESTORE}")
        self._drawn = True

    def resumed(self) -> None:
        if self._drawn:
            self._emit(ERASE_TO_END)
            self._drawn = False

    def _emit(self, text: str) -> None:
        with self._guard():
            self._stream.write(text)
            self._stream.flush()
