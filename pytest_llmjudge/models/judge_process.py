"""Judge calls sent from a process of their own (``--llmjudge-judge-process``, on by default).

A run's Python work (collecting, reporting each case, writing results) and the judge's HTTP work
(the OpenAI SDK building each request, httpx sending it, parsing the answer) compete for one
interpreter lock when they share a process; on a busy run each judge call then waits for the
lock as long as for the server. Here the HTTP work runs in a child process, started once per run
(``python -m pytest_llmjudge.models.judge_worker``) and fed over its standard input and output:

- ``RemoteModel`` is a pydantic-ai model on this side. The agent, the verdict's validation, the
  retries, the cache and the budget stay here; only ``Model.request`` crosses: the messages,
  settings and request parameters go to the child, whose real OpenAI chat model (built as
  ``openai_compatible_model`` builds it: response cap, fingerprint, prepared once) answers with
  its ``ModelResponse``, or with the ``JudgeFailure`` its exception classifies as, and the time the
  server said it spent.
- The child imports the OpenAI SDK while this process collects; this process never does.
- A frame is 4 bytes of length and a pickle of a tuple. Both ends are this package, run by the
  same interpreter: nothing a user wrote is unpickled.

Judges served at a base URL (``--llmjudge-base-url``, a benchmark's ``judge.base_url``, model
tasks' base URLs) go through it; other providers, the local judge, batch runs and models from the
``pytest_llmjudge_model`` hook are called in this process.

``JudgeProcesses`` is what a run holds: one judge process, and a second one once the first reports
that the judge's server closes its connection after each answer (``Connection: close``), on a
machine of two CPUs or more. Each call then opens a new connection, and two event loops opening
them beat one (``bench/throughput.py --http --no-keep-alive``: 1.04× the plain SDK loop instead of
1.15×); a server that keeps connections alive is served best by one process, which never pays for
a second one's start-up. A call goes to the started process with the fewest calls in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import threading
from functools import partial
from typing import IO, TYPE_CHECKING, Any

from .failure import CarriedFailure, JudgeFailure
from .server_time import note_seconds

if TYPE_CHECKING:  # pydantic-ai is imported by the models; starting the process needs none of it
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.profiles import ModelProfile
    from pydantic_ai.settings import ModelSettings

    from .remote_model import ModelSpec, RemoteModel

_HEADER = struct.Struct("!I")
WORKER_MODULE = "pytest_llmjudge.models.judge_worker"
_SHARED_LIMIT = 64
_STDERR_TAIL = 2000  # characters of the child's error output a failure quotes


def write_frame(stream: IO[bytes], message: tuple[Any, ...]) -> None:
    """One message: its length, then its pickle."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> tuple[Any, ...] | None:
    """The next message, or None at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    message: tuple[Any, ...] = pickle.loads(data)
    return message


_Pending = tuple[asyncio.AbstractEventLoop, "asyncio.Future[tuple[Any, ...]]"]


class JudgeProcess:
    """The child process that sends judge calls, and this side's calls waiting for its answers."""

    def __init__(self) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._process = subprocess.Popen(
            [sys.executable, "-m", WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,  # line-buffered in the child: its last line is there when it ends
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._input = self._process.stdin
        self._output = self._process.stdout
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # one writer at a time; guards _pending and _ended
        self._pending: dict[int, _Pending] = {}
        self._models: dict[ModelSpec, int] = {}
        # settings and parameters sent once and named by a number after (a judge's request
        # template sends the same two objects with every call): id -> (object, its values, number)
        self._shared: dict[int, tuple[Any, Any, int]] = {}
        self._ended: str | None = None  # why the child can no longer answer
        self.ready = False  # the child said it has imported what a call needs
        self.closes_connections = False  # an answer of its server said ``Connection: close``
        self._reader = threading.Thread(target=self._read, name="llmjudge-judge-process", daemon=True)
        self._reader.start()

    def model(self, spec: ModelSpec, profile: ModelProfile) -> RemoteModel:
        """A model on this side whose requests the child's model of ``spec`` sends."""
        from .remote_model import RemoteModel

        return RemoteModel(partial(self.request, self.known(spec)), spec, profile)

    def known(self, spec: ModelSpec) -> int:
        """The number the child knows the judge of ``spec`` by, telling it of the judge first."""
        with self._lock:
            known = self._models.get(spec)
            if known is None:
                known = self._models[spec] = next(self._ids)
                self._send(("model", known, spec))
        return known

    @property
    def in_flight(self) -> int:
        """Calls waiting for the child's answer."""
        return len(self._pending)

    @property
    def answering(self) -> bool:
        """Its imports done (it said so), and not ended."""
        return self.ready and self._ended is None

    async def request(
        self,
        model_id: int,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> ModelResponse:
        """The child's model's answer to one request; raises ``CarriedFailure`` when it failed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[Any, ...]] = loop.create_future()
        with self._lock:
            call = next(self._ids)
            if self._ended is None:
                self._pending[call] = (loop, future)
                shared = self._share(settings), self._share(params)
                self._send(("request", call, model_id, messages, *shared))
            ended = self._ended
        if ended is not None:
            raise CarriedFailure(JudgeFailure("judge-process", ended))
        try:
            answer = await future
        except asyncio.CancelledError:
            with self._lock:
                if self._pending.pop(call, None) is not None and self._ended is None:
                    self._send(("cancel", call))
            raise
        kind, *rest = answer
        if kind == "ended":
            raise CarriedFailure(JudgeFailure("judge-process", rest[0]))
        answered, (seconds, responses, unknown, closed) = rest
        note_seconds(seconds, responses, unknown)
        self.closes_connections = self.closes_connections or closed
        if kind == "failed":
            raise CarriedFailure(JudgeFailure(*answered))
        return answered  # type: ignore[no-any-return]

    def _share(self, value: Any) -> int:
        """The number the child knows ``value`` by, sending it first if it is new (the lock held).
        A settings dict changed since it was sent is sent again."""
        values = dict(value) if isinstance(value, dict) else None
        kept = self._shared.get(id(value))
        if kept is not None and kept[0] is value and kept[1] == values:
            return kept[2]
        if len(self._shared) >= _SHARED_LIMIT:  # calls that build their own: start again
            self._shared.clear()
            self._send(("forget", 0))
        number = next(self._ids)
        self._shared[id(value)] = (value, values, number)  # held: its id stays its own
        self._send(("share", number, value))
        return number

    def _send(self, message: tuple[Any, ...]) -> None:
        """Write ``message`` to the child (the lock held); a child gone ends every call."""
        try:
            write_frame(self._input, message)
        except (OSError, ValueError):
            self._end_all(self._why_ended())

    def _read(self) -> None:
        """The reader thread: each answer to its waiting call, then the end to every call left."""
        while (message := _read_or_none(self._output)) is not None:
            kind, call, *rest = message
            if kind == "ready":
                self.ready = True
                continue
            with self._lock:
                waiting = self._pending.pop(call, None)
            if waiting is not None:
                _resolve(waiting, (kind, *rest))
        with self._lock:
            self._end_all(self._why_ended())

    def _end_all(self, why: str) -> None:
        if self._ended is None:
            self._ended = why
        pending, self._pending = self._pending, {}
        for waiting in pending.values():
            _resolve(waiting, ("ended", why))

    def _why_ended(self) -> str:
        """Why the child stopped answering: its exit status and the end of its error output."""
        try:
            status = self._process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        self._stderr.seek(0)
        tail = self._stderr.read().decode("utf-8", "replace")[-_STDERR_TAIL:].strip()
        said = f": {tail.splitlines()[-1]}" if tail else ""
        return f"the judge process ended (exit status {status}){said}"

    def close(self) -> None:
        """Stop the child; calls still in flight end."""
        with self._lock:
            if self._ended is None:
                self._ended = "the run is over"
        self._process.kill()  # nothing of its own to save: answers are kept on this side
        self._process.wait()
        with contextlib.suppress(OSError):
            self._input.close()
        self._reader.join(timeout=5)
        self._output.close()
        self._stderr.close()


class JudgeProcesses:
    """The run's judge processes: one, and a second once the first one's server closes each
    connection (see the module's docstring); ``model`` and ``close`` as ``JudgeProcess``'s."""

    def __init__(self, most: int | None = None) -> None:
        # two on two CPUs or more, but one in each of an xdist run's workers: they are many already
        self.most = most or (1 if os.environ.get("PYTEST_XDIST_WORKER") else min(2, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._closed = False
        self.started = [JudgeProcess()]

    def model(self, spec: ModelSpec, profile: ModelProfile) -> RemoteModel:
        """A model on this side whose requests the judge processes' models of ``spec`` send."""
        from .remote_model import RemoteModel

        return RemoteModel(partial(self.request, spec), spec, profile)

    async def request(
        self,
        spec: ModelSpec,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> ModelResponse:
        process = self._pick()
        return await process.request(process.known(spec), messages, settings, params)

    def _pick(self) -> JudgeProcess:
        """The answering process with the fewest calls in flight (the first one until one answers),
        starting the second one when the first's server closes connections."""
        if len(self.started) < self.most and self.started[0].closes_connections:
            with self._lock:
                if len(self.started) < self.most and not self._closed:
                    self.started = [*self.started, JudgeProcess()]
        answering = [process for process in self.started if process.answering] or self.started[:1]
        return min(answering, key=lambda process: process.in_flight)

    def close(self) -> None:
        """Stop every judge process; calls still in flight end, and no process starts after."""
        with self._lock:
            self._closed = True
        for process in self.started:
            process.close()


def _read_or_none(stream: IO[bytes]) -> tuple[Any, ...] | None:
    try:
        return read_frame(stream)
    except (OSError, ValueError, EOFError, pickle.UnpicklingError):
        return None


def _resolve(waiting: _Pending, answer: tuple[Any, ...]) -> None:
    loop, future = waiting

    def settle() -> None:
        if not future.done():
            future.set_result(answer)

    with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits any more
        loop.call_soon_threadsafe(settle)
