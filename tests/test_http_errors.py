"""A judge server's HTTP error is one plain line: status, URL and the server's message text."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pydantic_ai.models
import pytest

BENCHMARK = """\
code: B1
concept: The output is right.
threshold: 0.5
cases:
  - {id: c0, source_narrative: n, candidate_output: o}
"""


class FailingServer(BaseHTTPRequestHandler):
    """Answers every chat completion with HTTP 500 and an OpenAI-style error body."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        error = {"error": {"message": "model overloaded " + "x" * 300, "type": "server_error", "code": 500}}
        data = json.dumps(error).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def failing_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FailingServer)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_http_error_names_status_url_and_message_in_one_line(
    pytester: pytest.Pytester, failing_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", "--llmjudge-cache=off",
        "--llmjudge-attempts=1", "--llmjudge-model=judge", f"--llmjudge-base-url={failing_server}",
    )  # fmt: skip
    result.assert_outcomes(passed=1, errors=1)
    line = f"HTTP 500 from {failing_server}/chat/completions: model overloaded {'x' * 150}"
    (error,) = [text for text in result.stdout.lines if "after 1 attempt: HTTP 500" in text]
    assert line in error and "{" not in error
