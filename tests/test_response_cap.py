"""A judge response is read up to a cap (``--llmjudge-max-response-bytes``, 1 MB by default) of
decoded bytes, streamed: a gzip bomb, an endless chunked body or a huge body ends its case as an
ERROR naming the cap, quickly and in little memory, instead of taking the run's memory."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from xml.etree import ElementTree

import httpx2
import pytest
from fake_openai import benchmark_yaml

from pytest_llmjudge.models.response_cap import CappedStream, UnreadableResponse
from pytest_llmjudge.reporting.junit import REASON_LIMIT

CAP_MESSAGE = "larger than the 1,000,000-byte cap (--llmjudge-max-response-bytes)"


def completion(reason: str = "fine", passed: bool = True) -> bytes:
    message = {"role": "assistant", "content": json.dumps({"reason": reason, "pass": passed})}
    return json.dumps(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-judge",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        }
    ).encode()


def padded_gzip(padding: int) -> bytes:
    """A valid completion after ``padding`` bytes of JSON whitespace, gzipped: a bomb of about
    ``padding / 1000`` bytes on the wire."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b" " * (1 << 20)
    parts = [squeeze.compress(block) for _ in range(padding // len(block))]
    return b"".join([*parts, squeeze.compress(completion()), squeeze.flush()])


@dataclass
class Answer:
    """How the server answers every POST: a body (with headers), or chunks without end."""

    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    endless: bool = False
    sent: int = 0  # bytes written so far


class _Handler(BaseHTTPRequestHandler):
    answer: ClassVar[Answer]
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        answer = self.answer
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        for name, value in answer.headers:
            self.send_header(name, value)
        try:
            if answer.endless:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b" " * 65536
                frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
                for _ in range(4096):  # 256 MiB at most, then the server gives up
                    self.wfile.write(frame)
                    answer.sent += len(chunk)
                return
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
            answer.sent += len(answer.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def answer() -> Iterator[tuple[str, Answer]]:
    answer = Answer()
    handler = type("Handler", (_Handler,), {"answer": answer})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", answer
    finally:
        httpd.shutdown()
        httpd.server_close()


def run(pytester: pytest.Pytester, url: str, *args: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\nllmjudge_attempts = 2\n")
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(benchmark_yaml(1))
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "--llmjudge-cache=off",
        "--llmjudge-timeout=20",
        "--junitxml=out.xml",
        "--llmjudge-model=fake-judge",
        f"--llmjudge-base-url={url}",
        "benchmarks",
        *args,
    )


def junit_reason(pytester: pytest.Pytester) -> str:
    tree = ElementTree.parse(pytester.path / "out.xml")
    return next(p.get("value", "") for p in tree.iter("property") if p.get("name") == "llmjudge_reason")


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(lambda: (padded_gzip(8 << 20), (("Content-Encoding", "gzip"),)), id="gzip-bomb"),
        pytest.param(lambda: (b" " * (5 << 20) + completion(), ()), id="5-MB-body"),
    ],
)
def test_a_response_over_the_cap_is_an_error_naming_it(
    pytester: pytest.Pytester, answer: tuple[str, Answer], body: Any
) -> None:
    url, server = answer
    server.body, server.headers = body()
    started = time.monotonic()
    result = run(pytester, url)
    out = result.stdout.str()
    assert "judge ERROR (response-too-large)" in out and CAP_MESSAGE in out, out
    assert "1 error" in out
    assert time.monotonic() - started < 15
    assert CAP_MESSAGE in junit_reason(pytester)


def test_an_endless_body_is_read_only_up_to_the_cap(
    pytester: pytest.Pytester, answer: tuple[str, Answer]
) -> None:
    url, server = answer
    server.endless = True
    started = time.monotonic()
    result = run(pytester, url)
    out = result.stdout.str()
    assert "judge ERROR (response-too-large)" in out and CAP_MESSAGE in out, out
    assert time.monotonic() - started < 15  # not the 20 s timeout
    assert "after 1 attempt" in out  # a retry would read another megabyte for the same answer


def test_the_cap_is_a_setting_and_an_answer_within_it_is_read_whole(
    pytester: pytest.Pytester, answer: tuple[str, Answer], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, server = answer
    server.body, server.headers = gzip.compress(completion("x" * 3000)), (("Content-Encoding", "gzip"),)
    assert "2 passed" in run(pytester, url).stdout.str()  # decoded by the cap's own gzip reader
    monkeypatch.setenv("LLMJUDGE_MAX_RESPONSE_BYTES", "2000")
    out = run(pytester, url).stdout.str()
    assert "larger than the 2,000-byte cap" in out, out
    out = run(pytester, url, "--llmjudge-max-response-bytes=0").stderr.str()
    assert "--llmjudge-max-response-bytes: must be at least 1, not 0" in out


def test_junit_keeps_a_long_reason_cut(pytester: pytest.Pytester, answer: tuple[str, Answer]) -> None:
    url, server = answer
    server.body = completion("why " * 50_000, passed=False)
    run(pytester, url)
    kept = junit_reason(pytester)
    assert len(kept) <= REASON_LIMIT and kept.endswith("more characters]"), kept[-80:]


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, data: bytes, size: int = 65536) -> None:
        self.chunks = [data[i : i + size] for i in range(0, len(data), size)]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def read(data: bytes, encodings: list[str], limit: int) -> list[bytes]:
    async def collect() -> list[bytes]:
        return [piece async for piece in CappedStream(_Chunks(data), encodings, limit)]

    return asyncio.run(collect())


def test_a_bomb_is_inflated_in_small_steps_and_stopped_at_the_cap() -> None:
    bomb = padded_gzip(64 << 20)  # 64 MiB of spaces in about 64 KB
    pieces: list[int] = []

    async def collect() -> None:
        async for piece in CappedStream(_Chunks(bomb), ["gzip"], 1_000_000):
            pieces.append(len(piece))

    with pytest.raises(UnreadableResponse, match="1,000,000-byte cap"):
        asyncio.run(collect())
    assert max(pieces) <= 1 << 16 and sum(pieces) <= 1_000_000


@pytest.mark.parametrize(
    ("encode", "encodings"),
    [
        (gzip.compress, ["gzip"]),
        (zlib.compress, ["deflate"]),
        (lambda data: zlib.compress(data)[2:-4], ["deflate"]),  # raw deflate, as some servers send it
        (lambda data: gzip.compress(gzip.compress(data)), ["gzip", "gzip"]),
        (lambda data: data, []),
    ],
)
def test_an_answer_within_the_cap_is_decoded_whole(encode: Any, encodings: list[str]) -> None:
    body = completion("y" * 200_000)
    assert b"".join(read(encode(body), encodings, 1_000_000)) == body


def test_model_strings_get_the_cap_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_llmjudge.models.models import build_model
    from pytest_llmjudge.models.response_cap import CappedTransport

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    model: Any = build_model("openai:gpt-4o", max_response_bytes=1234)
    transport = model.client._client._transport
    assert isinstance(transport, CappedTransport) and transport._limit == 1234
