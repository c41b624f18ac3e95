"""A run with a local judge reaches the judge server only when a case needs it: a fully cached
run answers from the cache with the server gone."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pydantic_ai.models
import pytest

BENCHMARK = """\
code: B1
concept: The output is right.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
cases:
  - {id: c0, source_narrative: n, candidate_output: o}
  - {id: c1, source_narrative: m, candidate_output: p}
"""


class FakeOpenAI(BaseHTTPRequestHandler):
    """Lists one model and answers every chat completion with a passing verdict; counts requests."""

    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        FakeOpenAI.requests.append(self.path)
        if self.path == "/v1/models":
            self._reply({"object": "list", "data": [{"id": "fake-judge", "object": "model"}]})
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        FakeOpenAI.requests.append(self.path)
        verdict = json.dumps({"reason": "fine", "pass": True})
        message = {"role": "assistant", "content": verdict}
        self._reply(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": "fake-judge",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            }
        )

    def _reply(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def fake_server() -> Iterator[tuple[str, ThreadingHTTPServer]]:
    FakeOpenAI.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_fully_cached_run_does_not_reach_the_local_judge_server(
    pytester: pytest.Pytester,
    fake_server: tuple[str, ThreadingHTTPServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    monkeypatch.delenv("LLMJUDGE_LOCAL_SERVER_URL", raising=False)
    url, httpd = fake_server
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    args = ["-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", f"--llmjudge-model=local:{url}"]
    pytester.runpytest(*args).assert_outcomes(passed=3)  # the prompt item and two cases
    assert FakeOpenAI.requests.count("/v1/chat/completions") == 2
    FakeOpenAI.requests = []
    httpd.shutdown()
    httpd.server_close()  # nothing listens there any more

    rerun = pytester.runpytest(*args)

    rerun.assert_outcomes(passed=3)
    assert "2 cache hit(s)" in rerun.stdout.str()
    assert FakeOpenAI.requests == []
