"""The judge process (``models/judge_process.py``): builds the judges it is told of and sends
their requests, many at once on one event loop, until its input ends.

Run as ``python -m pytest_llmjudge.models.judge_worker``; it reads frames on its standard input
and answers on the standard output it was started with. Anything printed while it runs goes to
its standard error, never into the answers.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from functools import partial
from typing import IO, TYPE_CHECKING, Any

from .judge_process import read_frame, write_frame
from .server_time import timed_call

if TYPE_CHECKING:
    from .remote_model import ModelSpec


class Worker:
    """The child's state: its models, its requests in flight, and the stream answers go to."""

    def __init__(self, answers: IO[bytes]) -> None:
        self._answers = answers
        self._models: dict[int, Any] = {}
        self._calls: dict[int, asyncio.Task[None]] = {}
        self._shared: dict[int, Any] = {}  # settings and parameters, by the number the run gave them

    def handle(self, message: tuple[Any, ...]) -> None:
        """Act on one message."""
        kind, key, *rest = message
        if kind == "model":
            self._models[key] = _build(rest[0])
        elif kind == "share":
            self._shared[key] = rest[0]
        elif kind == "forget":
            self._shared.clear()
        elif kind == "request":
            model_id, messages, settings, params = rest
            model, shared = self._models[model_id], self._shared
            task = asyncio.create_task(self._answer(key, model, messages, shared[settings], shared[params]))
            self._calls[key] = task
            task.add_done_callback(partial(self._forget, key))
        elif kind == "cancel" and (running := self._calls.pop(key, None)) is not None:
            running.cancel()

    def _forget(self, call: int, task: asyncio.Task[None]) -> None:
        self._calls.pop(call, None)

    async def _answer(self, call: int, model: Any, messages: Any, settings: Any, params: Any) -> None:
        with timed_call() as server:
            try:
                response = await model.request(messages, settings, params)
            except Exception as exc:
                from .classify import classify  # imported by then: main() imports it with the model

                f = classify(exc)
                fields = (f.kind, f.message, f.transient, f.retry_after, f.usage)
                answer: tuple[Any, ...] = ("failed", call, fields)
            else:
                answer = ("answered", call, response)
        said = (server.seconds, server.responses, server.unknown, server.closed)
        write_frame(self._answers, (*answer, said))

    def stop(self) -> None:
        """Its input ended: the run is over, nobody waits for the requests still running."""
        for running in list(self._calls.values()):
            running.cancel()


def _build(spec: ModelSpec) -> Any:
    from .models import openai_compatible_model

    return openai_compatible_model(
        spec.base_url, spec.model_name, api_key=spec.api_key, max_response_bytes=spec.max_response_bytes
    )


async def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """Answer the frames read from ``requests`` until it ends (the run kills the process first)."""
    loop = asyncio.get_running_loop()
    worker = Worker(answers)
    queue: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()

    def read() -> None:  # a thread: reading blocks
        while True:
            message = read_frame(requests)
            loop.call_soon_threadsafe(queue.put_nowait, message)
            if message is None:
                return

    loop.run_in_executor(None, read)
    write_frame(answers, ("ready", 0))  # what a call needs is imported: send them here
    while (message := await queue.get()) is not None:
        worker.handle(message)
    worker.stop()


def main() -> None:
    # the answers go to the standard output this process was started with; anything else printed
    # (a library's warning, a print) goes to the standard error
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    requests = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    # the OpenAI SDK and pydantic-ai's chat model, imported (by building a judge that is never
    # called) while the run collects: without the cycle collector, which finds nothing to free
    # among modules (-14 % of the time), and then kept out of its way for good. This module
    # imports neither at its top, so that all of it runs with the collector off.
    gc.disable()
    from . import classify  # noqa: F401  (what a failed call needs)
    from .models import openai_compatible_model

    warm = openai_compatible_model("http://127.0.0.1:9/v1", "warm-up")
    _ = warm.profile, warm.client.chat.completions  # type: ignore[attr-defined]
    del warm
    gc.freeze()
    gc.enable()
    asyncio.run(serve(requests, answers))


if __name__ == "__main__":
    main()
