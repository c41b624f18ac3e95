"""A loopback OpenAI-compatible judge for benchmarks: every chat completion takes L seconds.

It runs in a process of its own (``serve_judge``), so that its work never competes for the GIL
with the client being measured, and serves any number of requests at once on one asyncio loop:
32 requests in flight each take L seconds, as from a real judge that is never saturated.

- ``POST …/chat/completions``: after ``latency`` seconds, a completion from ``model`` whose
  message is a passing verdict, ``{"reason": …, "pass": true}`` (the JSON a structured-output
  judge returns), with the time the server spent on it in ``openai-processing-ms``, as OpenAI's
  API says it.
- ``GET /v1/models``: the one model. ``GET /stats``: completions answered, the most answered at
  once, when the first request arrived and the last answer left (``time.time()``), each
  completion's time in the server and the first one's request body; ``GET /stats?reset=1``
  answers them and starts again.

With ``keep_alive`` a connection serves request after request (HTTP/1.1 keep-alive, as hosted
APIs do); without it every answer says ``Connection: close``, so each request opens a new one.

    python bench/http_judge.py [--latency 0.25] [--model bench-judge] [--no-keep-alive]

prints ``listening on http://127.0.0.1:PORT`` and serves until its standard input closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

VERDICT = {"reason": "every negated finding stays absent in the output", "pass": True}


@dataclass(frozen=True)
class JudgeServer:
    """A running judge: its base URL (``…/v1``, as OpenAI clients take it) and settings."""

    base_url: str
    latency: float
    keep_alive: bool
    model: str

    def stats(self, reset: bool = False) -> dict[str, Any]:
        """The server's counters (see the module docstring); ``reset`` starts them again."""
        root = self.base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{root}/stats{'?reset=1' if reset else ''}", timeout=10) as answer:
            stats: dict[str, Any] = json.loads(answer.read())
        return stats


@dataclass
class _Counters:
    completions: int = 0
    in_flight: int = 0
    peak: int = 0
    first_request: float = 0.0
    last_answer: float = 0.0
    seconds: list[float] = field(default_factory=list)  # each completion's time in the server
    sample_request: Any = None  # the first completion request's body

    def as_json(self) -> dict[str, Any]:
        return {
            "completions": self.completions,
            "peak": self.peak,
            "first_request": self.first_request,
            "last_answer": self.last_answer,
            "seconds": self.seconds,
            "sample_request": self.sample_request,
        }


class _Judge:
    """The server's state: its settings and counters; one connection handler per client."""

    def __init__(self, latency: float, keep_alive: bool, model: str) -> None:
        self.latency = latency
        self.keep_alive = keep_alive
        self.model = model
        self.counters = _Counters()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, target, headers, body = request
                started = time.time()
                status, payload = await self._answer(method, target, body)
                keep = self.keep_alive and headers.get("connection", "").lower() != "close"
                spent = (time.time() - started) * 1000 if payload.get("object") == "chat.completion" else None
                writer.write(_response(status, payload, keep, spent))
                await writer.drain()
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # a client that hung up or sent no HTTP: drop the connection
        finally:
            writer.close()

    async def _answer(self, method: str, target: str, body: bytes) -> tuple[int, dict[str, Any]]:
        path, _, query = target.partition("?")
        if method == "POST" and path.endswith("/chat/completions"):
            try:
                sent = json.loads(body)
            except ValueError:
                return 400, {"error": {"message": "the request body is not JSON"}}
            if self.counters.sample_request is None:
                self.counters.sample_request = sent
            return 200, await self._complete()
        if method == "GET" and path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]}
        if method == "GET" and path == "/stats":
            stats = self.counters.as_json()
            if query == "reset=1":
                self.counters = _Counters()
            return 200, stats
        return 404, {"error": {"message": f"no route for {method} {path}"}}

    async def _complete(self) -> dict[str, Any]:
        counters = self.counters
        arrived = time.time()
        counters.first_request = counters.first_request or arrived
        counters.in_flight += 1
        counters.peak = max(counters.peak, counters.in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            counters.in_flight -= 1
        counters.completions += 1
        counters.last_answer = time.time()
        counters.seconds.append(counters.last_answer - arrived)
        return {
            "id": f"bench-{counters.completions}",
            "object": "chat.completion",
            "created": int(arrived),
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": json.dumps(VERDICT)},
                }
            ],
            "usage": {"prompt_tokens": 400, "completion_tokens": 20, "total_tokens": 420},
        }


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    """One HTTP/1.1 request (method, target, lower-cased headers, body); None at end of stream."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, target, headers, body


def _response(status: int, payload: dict[str, Any], keep_alive: bool, spent_ms: float | None = None) -> bytes:
    """The HTTP answer; a completion's says how long the server spent on it, as OpenAI's API
    does (``openai-processing-ms``)."""
    data = json.dumps(payload).encode()
    spent = "" if spent_ms is None else f"openai-processing-ms: {spent_ms:.0f}\r\n"
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n"
        f"{spent}Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    )
    return head.encode() + data


async def _serve(latency: float, keep_alive: bool, model: str) -> None:
    judge = _Judge(latency, keep_alive, model)
    server = await asyncio.start_server(judge.connection, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    loop = asyncio.get_running_loop()
    async with server:
        # serve until whoever started us closes our standard input (or exits)
        await loop.run_in_executor(None, sys.stdin.buffer.read)


@contextmanager
def serve_judge(
    latency: float = 0.25, keep_alive: bool = True, model: str = "bench-judge"
) -> Iterator[JudgeServer]:
    """A judge server in a process of its own for the length of the block."""
    command = [sys.executable, __file__, f"--latency={latency}", f"--model={model}"]
    command.append("--keep-alive" if keep_alive else "--no-keep-alive")
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the judge server did not start: {line!r}")
        url = line.split()[-1]
        yield JudgeServer(f"{url}/v1", latency, keep_alive, model)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per completion (default 0.25)")
    parser.add_argument("--model", default="bench-judge", help="the model name answers carry")
    parser.add_argument(
        "--keep-alive",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="keep connections open between requests (default on)",
    )
    args = parser.parse_args()
    asyncio.run(_serve(args.latency, args.keep_alive, args.model))


if __name__ == "__main__":
    main()
