"""Run every judge call concurrently ahead of pytest's run loop.

Jobs are coroutines started on an asyncio loop in one background thread, bounded by a
semaphore (and an optional requests-per-minute pacer). pytest's items run in collection order
as usual; each item only waits for its own job's result. Knows nothing of pytest.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Progress:
    queued: int = 0
    in_flight: int = 0
    done: int = 0
    max_in_flight: int = 0


class RatePacer:
    """Spaces request starts so that at most ``rpm`` start in any minute."""

    def __init__(self, rpm: float | None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


@dataclass
class Scheduler(Generic[T]):
    """Starts jobs in the background and hands out their results by key."""

    concurrency: int
    rpm: float | None = None
    progress: Progress = field(default_factory=Progress)

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="llmjudge-scheduler", daemon=True)
        self._futures: dict[str, concurrent.futures.Future[T]] = {}
        self._lock = threading.Lock()
        self._started = False

    def start(self, jobs: Iterable[tuple[str, Callable[[], Awaitable[T]]]]) -> None:
        """Schedule ``(key, job)`` pairs in order; jobs run at most ``concurrency`` at a time."""
        if not self._started:
            self._thread.start()
            self._started = True
        semaphore_ready = concurrent.futures.Future[tuple[asyncio.Semaphore, RatePacer]]()

        async def make() -> None:
            semaphore_ready.set_result((asyncio.Semaphore(self.concurrency), RatePacer(self.rpm)))

        asyncio.run_coroutine_threadsafe(make(), self._loop).result()
        semaphore, pacer = semaphore_ready.result()
        for key, job in jobs:
            with self._lock:
                if key in self._futures:
                    continue
                self.progress.queued += 1
                self._futures[key] = asyncio.run_coroutine_threadsafe(self._run(job, semaphore, pacer), self._loop)

    async def _run(self, job: Callable[[], Awaitable[T]], semaphore: asyncio.Semaphore, pacer: RatePacer) -> T:
        async with semaphore:
            await pacer.wait()
            self.progress.queued -= 1
            self.progress.in_flight += 1
            self.progress.max_in_flight = max(self.progress.max_in_flight, self.progress.in_flight)
            try:
                return await job()
            finally:
                self.progress.in_flight -= 1
                self.progress.done += 1

    def has(self, key: str) -> bool:
        return key in self._futures

    def result(self, key: str) -> T:
        """Block until ``key``'s job is done; re-raises what the job raised."""
        return self._futures[key].result()

    def cancel_pending(self) -> int:
        """Cancel every job not yet finished; returns how many were cancelled."""
        cancelled = 0
        with self._lock:
            for future in self._futures.values():
                if not future.done() and future.cancel():
                    cancelled += 1
        return cancelled

    def close(self) -> None:
        """Cancel what is pending and stop the loop thread."""
        self.cancel_pending()
        if self._started:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        if not self._loop.is_running():
            self._loop.close()
