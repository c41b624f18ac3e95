"""Run every judge job concurrently ahead of pytest's run loop.

Jobs are coroutines on an asyncio loop in one background thread, under a root task that lives
until the scheduler closes. A job that needs the model holds one of ``concurrency`` slots while
it does (``Slots.hold``), and starts each request no sooner than the requests-per-minute pacer
and any provider back-off allow; a job answered from the cache never takes a slot. pytest's
items run in collection order as usual, each waiting only for its own job. Knows nothing of
pytest.

While a scheduler runs, the interpreter's switch interval is at most ``SWITCH_INTERVAL``: the
loop thread and pytest's main thread take turns holding the GIL, and each system call one of
them makes (a socket read, pytest's output capture, a progress dot) hands it to the other, which
at the default interval (5 ms) could keep it that long while the first waited. Measured, 1,000
judge calls over HTTP 32 at a time: the calls' median overhead over the server's time fell from
0.53-0.57 s to 0.26-0.35 s and the judging phase by a third (a loaded 2-core machine).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Container, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
Job = Callable[["Slots"], Awaitable[T]]
SWITCH_INTERVAL = 0.0005  # seconds, the longest a thread keeps the GIL while another waits for it


class _SwitchInterval:
    """The process's switch interval lowered while any scheduler runs, then put back as it was."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._before = 0.0

    def lower(self, seconds: float) -> None:
        with self._lock:
            if not self._holders:
                self._before = sys.getswitchinterval()
                sys.setswitchinterval(min(seconds, self._before))  # a lower one set by the user stays
            self._holders += 1

    def restore(self) -> None:
        with self._lock:
            self._holders -= 1
            if not self._holders:
                sys.setswitchinterval(self._before)


_SWITCH = _SwitchInterval()


@dataclass
class Progress:
    """Counts the status line shows; written by the loop thread only."""

    total: int = 0
    done: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    cache_hits: int = 0
    errors: int = 0
    started: float | None = None  # time.monotonic() when the first job was started (for an ETA)

    @property
    def queued(self) -> int:
        return self.total - self.done - self.in_flight


class Waiting(Protocol):
    """Told while the main thread waits for a result, so it can show progress meanwhile."""

    def waiting(self, progress: Progress) -> None: ...

    def resumed(self) -> None: ...


class RatePacer:
    """Spaces request starts so that at most ``rpm`` start in any minute, and honours back-off.

    ``pause(seconds)`` (a provider's Retry-After) holds every request start it paces, not just the
    one that was told, so a rate limit slows all calls to that server instead of being hit 32
    times over (``Slots`` keeps one pacer per server for this).
    """

    def __init__(self, rpm: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self._clock = clock
        self._next = 0.0
        self._not_before = 0.0

    def delay(self) -> float:
        """Seconds the caller must wait before its request starts; books its start time."""
        now = self._clock()
        start = max(now, self._not_before, self._next if self.interval else now)
        if self.interval:
            self._next = start + self.interval
        return start - now

    def pause(self, seconds: float) -> None:
        self._not_before = max(self._not_before, self._clock() + seconds)

    async def wait(self) -> None:
        delay = self.delay()
        if delay > 0:
            await asyncio.sleep(delay)


class Slots:
    """The bound on model calls in flight, plus request pacing. Lives on the scheduler's loop."""

    def __init__(
        self,
        concurrency: int,
        rpm: float | None,
        progress: Progress,
        limits: Mapping[str, int] | None = None,
    ) -> None:
        self._semaphore = asyncio.Semaphore(concurrency)
        self.pacer = RatePacer(rpm)
        self.progress = progress
        self._endpoints: dict[str, RatePacer] = {}  # each server's own Retry-After back-off
        self._limits = limits if limits is not None else {}  # a server's own slots, read when held
        self._per_endpoint: dict[str, asyncio.Semaphore] = {}

    @asynccontextmanager
    async def hold(self, endpoint: str = "") -> AsyncIterator[None]:
        """Hold one slot: at most ``concurrency`` holders at any moment, and at most ``limits``'
        number for ``endpoint`` (a server's own slots), waited for first so that a call waiting
        for its server never keeps another server's call from starting."""
        async with self._endpoint_slot(endpoint), self._semaphore:
            progress = self.progress
            progress.in_flight += 1
            progress.max_in_flight = max(progress.max_in_flight, progress.in_flight)
            try:
                yield
            finally:
                progress.in_flight -= 1

    def server(self, endpoint: str) -> contextlib.AbstractAsyncContextManager[Any]:
        """Only ``endpoint``'s own slots: a task call to a server the judge shares (a local
        server with one slot) waits here, not in the server's queue, where judge calls behind it
        would run out of time."""
        return self._endpoint_slot(endpoint)

    def _endpoint_slot(self, endpoint: str) -> contextlib.AbstractAsyncContextManager[Any]:
        limit = self._limits.get(endpoint)
        if limit is None:
            return contextlib.nullcontext()
        if endpoint not in self._per_endpoint:
            self._per_endpoint[endpoint] = asyncio.Semaphore(limit)
        return self._per_endpoint[endpoint]

    async def pace(self, endpoint: str = "") -> None:
        """Wait until the next request may start (requests per minute, ``endpoint``'s back-off)."""
        await self.pacer.wait()
        if endpoint in self._endpoints:
            await self._endpoints[endpoint].wait()

    def back_off(self, seconds: float, endpoint: str = "") -> None:
        """Hold the requests to ``endpoint`` (one server) for ``seconds``; other servers go on."""
        if endpoint not in self._endpoints:
            self._endpoints[endpoint] = RatePacer(None)
        self._endpoints[endpoint].pause(seconds)


class Scheduler(Generic[T]):
    """Starts jobs in the background and hands out their results by key."""

    def __init__(
        self,
        concurrency: int,
        rpm: float | None = None,
        tally: Callable[[T, Progress], None] | None = None,
        waiting: Waiting | None = None,
        poll: float = 0.2,
        limits: Mapping[str, int] | None = None,
        switch_interval: float | None = SWITCH_INTERVAL,
    ) -> None:
        self.progress = Progress()
        self._switch_interval = switch_interval  # None: the interpreter's own
        self._limits = limits  # endpoint -> calls in flight at most (a server's slots)
        self._concurrency = concurrency
        self._rpm = rpm
        self._tally = tally
        self._waiting = waiting
        self._poll = poll
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Future[None] = self._loop.create_future()
        self._thread = threading.Thread(target=self._serve, name="llmjudge-scheduler", daemon=True)
        self._futures: dict[str, concurrent.futures.Future[T]] = {}
        self._tasks: dict[asyncio.Task[None], concurrent.futures.Future[T]] = {}
        self._slots: Slots | None = None
        self._closed = False
        self._finalizers: list[Callable[[], None]] = []

    def _serve(self) -> None:
        """The loop thread: runs the jobs until ``close``, under the root task ``_root``.

        Not ``run_forever``: anyio, which runs a sync ``def`` judge in a worker thread, looks up
        the root task on every call and keeps its threads while that task lives. With none, each
        call scanned every pending task and started a thread that stopped with its job: quadratic
        in the number of jobs (3,000 cases 9 s, 12,000 cases 61 s).
        """
        self._loop.run_until_complete(self._root())

    async def _root(self) -> None:
        await self._stop

    def start(self, jobs: Iterable[tuple[str, Job[T]]]) -> None:
        """Schedule ``(key, job)`` pairs in order; a key already scheduled is skipped."""
        batch: list[tuple[concurrent.futures.Future[T], Job[T]]] = []
        for key, job in jobs:
            if key in self._futures:
                continue
            future: concurrent.futures.Future[T] = concurrent.futures.Future()
            self._futures[key] = future
            batch.append((future, job))
        if not batch or self._closed:
            for future, _ in batch:
                future.cancel()
            return
        if not self._thread.is_alive():
            if self._switch_interval is not None:
                _SWITCH.lower(self._switch_interval)
                self.on_close(_SWITCH.restore)  # put back once the loop has stopped
            self._thread.start()
        # One hand-over for the whole batch: a thread-safe call per job would wake the loop
        # (and contend for the GIL) a thousand times.
        self._loop.call_soon_threadsafe(self._spawn, batch)

    def _spawn(self, batch: list[tuple[concurrent.futures.Future[T], Job[T]]]) -> None:
        if self._slots is None:
            self._slots = Slots(self._concurrency, self._rpm, self.progress, self._limits)
            self.progress.started = time.monotonic()
        for future, job in batch:
            if future.cancelled():
                continue  # cancelled before it started (-x, Ctrl-C)
            self.progress.total += 1
            task = self._loop.create_task(self._run(job, self._slots, future))
            self._tasks[task] = future
            task.add_done_callback(self._forget)

    async def _run(self, job: Job[T], slots: Slots, future: concurrent.futures.Future[T]) -> None:
        try:
            result = await job(slots)
        except asyncio.CancelledError:
            self.progress.total -= 1
            future.cancel()
            raise
        except BaseException as exc:  # handed to the waiting item, which reports it
            self.progress.done += 1
            _settle(future, exc)
            return
        self.progress.done += 1
        if self._tally is not None:
            self._tally(result, self.progress)
        _settle(future, result)

    def has(self, key: str) -> bool:
        return key in self._futures

    def result(self, key: str) -> T:
        """Block until ``key``'s job is done; re-raises what the job raised.

        While it waits, ``waiting`` is shown the progress every ``poll`` seconds.
        """
        future = self._futures[key]
        if self._waiting is None or future.done():
            return future.result()
        shown = False
        try:
            while True:
                try:
                    return future.result(timeout=self._poll)
                except concurrent.futures.TimeoutError:
                    self._waiting.waiting(self.progress)
                    shown = True
        finally:
            if shown:
                self._waiting.resumed()

    def cancel_pending(self, keep: Container[str] = ()) -> int:
        """Cancel every job not yet finished but those in ``keep``; returns how many were cancelled."""
        cancelled = 0
        for key, future in list(self._futures.items()):
            if key not in keep and not future.done():
                future.cancel()
                cancelled += 1
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._cancel_tasks)
        return cancelled

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._tasks.pop(task, None)

    def _cancel_tasks(self) -> None:
        for task, future in list(self._tasks.items()):
            if future.cancelled():
                task.cancel()

    def on_close(self, finalizer: Callable[[], None]) -> None:
        """Call ``finalizer`` once the loop has stopped (closing resources the jobs used)."""
        self._finalizers.append(finalizer)

    def close(self, timeout: float = 5.0) -> None:
        """Cancel what is pending, let cancelled jobs unwind, stop the loop thread, finalize."""
        if self._closed:
            return
        self._closed = True
        self.cancel_pending()
        if self._thread.is_alive():
            with contextlib.suppress(concurrent.futures.TimeoutError):
                asyncio.run_coroutine_threadsafe(self._drain(), self._loop).result(timeout)
            self._loop.call_soon_threadsafe(self._stop.set_result, None)
            self._thread.join(timeout)
        if not self._loop.is_running():
            self._loop.close()
        for finalizer in reversed(self._finalizers):
            finalizer()

    async def _drain(self) -> None:
        if self._tasks:
            await asyncio.wait(list(self._tasks))


def _settle(future: concurrent.futures.Future[T], outcome: T | BaseException) -> None:
    """Hand a job's end to its future, unless the main thread cancelled it meanwhile."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
