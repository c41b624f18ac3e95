"""Progress lines for runs without a terminal (CI logs): where a live status line cannot be
drawn, a line every tenth of the cases and every 30 seconds says how far the run has got, how
many model calls it made and what they cost. Knows nothing of pytest."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from ..gating.costs import CostTotal
from .status_line import duration

if TYPE_CHECKING:
    from ..gating.records import CaseRecord

STEPS = 10  # a line each time another tenth of the cases is done
EVERY_SECONDS = 30.0  # and when this long has passed since the last line
MIN_CASES_FOR_STEPS = 20  # a shorter run prints only the timed lines: its tenths are single cases


def wanted(is_tty: bool, environ: Mapping[str, str], verbosity: int, worker: bool) -> bool:
    """Progress lines where no live status line is drawn: output that is not a terminal (or a
    dumb one), unless ``-qq`` or on an xdist worker (whose output nobody sees)."""
    if worker or verbosity < -1 or environ.get("PYTEST_XDIST_WORKER"):
        return False
    return not is_tty or environ.get("TERM") == "dumb"


class ProgressLog:
    """Counts finished cases and writes a progress line when one is due."""

    def __init__(
        self,
        total: int,
        write: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        every: float | None = None,
    ) -> None:
        self.total = total  # 0 when not known (an xdist controller): timed lines only
        self.cases = 0
        self.calls = 0
        self.cost = CostTotal()
        self._write = write
        self._clock = clock
        self._every = EVERY_SECONDS if every is None else every
        self._started = self._last = clock()
        self._next_step = 1

    def add(self, records: Iterable[CaseRecord]) -> None:
        """Count the cases of ``records`` (those just finished); write a line when one is due."""
        from .summary import Stats

        records = [r for r in records if r.case]  # a benchmark without cases has a record too
        if not records:
            return
        stats = Stats.from_records(records)
        self.cases += len(records)
        self.calls += stats.calls
        if stats.cost is not None:
            cost = stats.cost
            unpriced = dict.fromkeys([*self.cost.unpriced, *cost.unpriced])
            self.cost = CostTotal(self.cost.usd + cost.usd, self.cost.saved + cost.saved, tuple(unpriced))
        if self._crossed_a_step() or self._time_is_up():
            self._emit()

    def tick(self) -> None:
        """Called while the run waits for a verdict: a line when 30 seconds have passed."""
        if self._time_is_up():
            self._emit()

    def line(self) -> str:
        """``llmjudge: 40/400 cases judged (10%) · 38 model calls · $0.0123 · 12s``."""
        done = f"{self.cases}/{self.total}" if self.total else str(self.cases)
        share = f" ({self.cases / self.total:.0%})" if self.total else ""
        calls = f"{self.calls} model call{'' if self.calls == 1 else 's'}"
        elapsed = duration(self._clock() - self._started)
        return f"llmjudge: {done} cases judged{share} · {calls} · {self.cost.text()} · {elapsed}"

    def _crossed_a_step(self) -> bool:
        if self.total < MIN_CASES_FOR_STEPS or self.cases >= self.total:
            return False  # the last case is followed by the run's summary
        step = self.cases * STEPS // self.total
        if step < self._next_step:
            return False
        self._next_step = step + 1
        return True

    def _time_is_up(self) -> bool:
        return self._clock() - self._last >= self._every

    def _emit(self) -> None:
        self._last = self._clock()
        self._write(self.line())
