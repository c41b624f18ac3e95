"""A fake OpenAI-compatible judge server for tests, on this machine in a thread.

``with serve() as fake:`` listens at ``fake.url`` (no ``/v1``): ``GET /v1/models`` lists one model,
``fake-judge``, any other GET is a 404, and every POST is a chat completion answered with
``fake.verdict`` (or ``fake.answer(body)`` when set) as the message content, or, while
``fake.status`` is not 200, with that status and an OpenAI-style error body. With ``fake.props``
set, ``GET /props`` answers it (llama.cpp's server properties, e.g. ``{"total_slots": 1}``);
``fake.delay`` seconds pass before each completion, and
``fake.peak`` is the most completions it was answering at once. Each answer reports
``fake.prompt_tokens`` and ``fake.completion_tokens`` as its usage (None: counted as a tokenizer
would, roughly: a token per 4 characters of the messages' text and output schemas sent, and of
the answer), ``fake.cached_tokens`` of them read from a prompt cache. Each answer names
``fake.model`` as the model that answered, and ``fake.system_fingerprint`` when set. The knobs may
change while it runs; every request is kept in ``fake.requests``.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import pytest


@dataclass(frozen=True)
class Request:
    """One request the fake server received."""

    method: str
    path: str
    auth: str | None
    body: Any = None


@dataclass
class FakeOpenAI:
    """What the fake server answers, and what it was asked."""

    verdict: Any = field(default_factory=lambda: {"reason": "fine", "pass": True})
    answer: Callable[[Any], Any] | None = None  # each request body's verdict, when set (else ``verdict``)
    status: int = 200
    # the "error" object of an answer that is not 200; None echoes the request's Authorization header
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)  # sent with every POST answer
    props: dict[str, Any] | None = None  # GET /props answers this (404 while None)
    delay: float = 0.0  # seconds each completion takes
    prompt_tokens: int | None = 3  # the usage each answer reports; None: counted (see the module)
    completion_tokens: int | None = 2
    cached_tokens: int = 0  # of the prompt tokens, read from the provider's prompt cache
    model: str = "fake-judge"  # the model each answer says answered (a provider's resolved snapshot)
    system_fingerprint: str | None = None  # sent with each answer when set
    peak: int = 0  # most completions answered at once
    _busy: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    requests: list[Request] = field(default_factory=list)
    url: str = ""
    _httpd: ThreadingHTTPServer | None = field(default=None, repr=False)

    @property
    def completions(self) -> list[Request]:
        """The chat completion requests (every POST)."""
        return [request for request in self.requests if request.method == "POST"]

    def stop(self) -> None:
        """Stop listening: nothing answers at ``url`` any more."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


class _Handler(BaseHTTPRequestHandler):
    fake: ClassVar[FakeOpenAI]

    def do_GET(self) -> None:
        self.fake.requests.append(Request("GET", self.path, self.headers.get("Authorization")))
        if self.path == "/v1/models":
            self._reply(200, {"object": "list", "data": [{"id": "fake-judge", "object": "model"}]})
        elif self.path == "/props" and self.fake.props is not None:
            self._reply(200, self.fake.props)
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        auth = self.headers.get("Authorization")
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        fake = self.fake
        fake.requests.append(Request("POST", self.path, auth, body))
        with fake._lock:
            fake._busy += 1
            fake.peak = max(fake.peak, fake._busy)
        try:
            time.sleep(fake.delay)
            self._answer(fake, auth, body)
        finally:
            with fake._lock:
                fake._busy -= 1

    def _answer(self, fake: FakeOpenAI, auth: str | None, body: Any) -> None:
        if fake.status != 200:
            error = fake.error or {"message": f"bad request; you sent Authorization: {auth}"}
            self._reply(fake.status, {"error": error}, fake.headers)
            return
        content = json.dumps(fake.verdict if fake.answer is None else fake.answer(body))
        message = {"role": "assistant", "content": content}
        prompt = fake.prompt_tokens if fake.prompt_tokens is not None else counted(sent_text(body))
        answer = fake.completion_tokens if fake.completion_tokens is not None else counted(content)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        }
        if fake.cached_tokens:
            usage["prompt_tokens_details"] = {"cached_tokens": fake.cached_tokens}
        completion: dict[str, Any] = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": fake.model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": usage,
        }
        if fake.system_fingerprint is not None:
            completion["system_fingerprint"] = fake.system_fingerprint
        self._reply(200, completion, fake.headers)

    def _reply(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def sent_text(body: Any) -> str:
    """The text of a chat completion request: each message's content, each tool's schema and the
    structured output's schema (a provider counts them all as input tokens)."""
    texts = [m["content"] for m in body.get("messages", []) if isinstance(m.get("content"), str)]
    texts += [json.dumps(t["function"].get("parameters", {})) for t in body.get("tools", [])]
    structured = (body.get("response_format") or {}).get("json_schema")
    if structured:
        texts.append(json.dumps(structured.get("schema", {})))
    return "\n".join(texts)


def counted(text: str) -> int:
    """Tokens of ``text`` as a tokenizer might count them: one per 4 characters."""
    return math.ceil(len(text) / 4)


@contextmanager
def serve(host: str = "127.0.0.1", **knobs: Any) -> Iterator[FakeOpenAI]:
    """A fake server listening on ``host`` (``0.0.0.0`` for other loopback addresses too) until the
    block ends; ``knobs`` are ``FakeOpenAI`` fields."""
    fake = FakeOpenAI(**knobs)
    handler = type("FakeOpenAIHandler", (_Handler,), {"fake": fake})
    httpd = ThreadingHTTPServer((host, 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    fake.url, fake._httpd = f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    try:
        yield fake
    finally:
        fake.stop()


def benchmark_yaml(cases: int = 1) -> str:
    """A benchmark file ``B1`` of ``cases`` cases (``c0``, ``c1``, …), each with its own output."""
    lines = [f"  - {{id: c{i}, source_narrative: n, candidate_output: o{i}}}" for i in range(cases)]
    return (
        "code: B1\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        "threshold: 0.5\ncases:\n" + "\n".join(lines) + "\n"
    )


def write_benchmark(pytester: pytest.Pytester, cases: int) -> None:
    """``benchmarks/B1.yaml`` of ``benchmark_yaml(cases)`` in the pytester project."""
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(benchmark_yaml(cases))


def run_judged(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    """``pytest benchmarks`` in process, judged by ``fake-judge`` at the fake server, one attempt."""
    return pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", "--llmjudge-model=fake-judge",
        f"--llmjudge-base-url={fake.url}/v1", "--llmjudge-attempts=1", *args,
    )  # fmt: skip


def results_file(pytester: pytest.Pytester, name: str) -> Any:
    """The results file ``name`` of the pytester project, parsed."""
    return json.loads((pytester.path / name).read_text())
