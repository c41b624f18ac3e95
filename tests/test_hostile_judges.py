"""Judge servers that misbehave: echo secrets, answer 5xx, ask for hour-long pauses, give verdicts
of the wrong type. Each test runs pytest against a fake OpenAI-compatible server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

SECRET = "sk-test-0123456789abcdefSECRET"
OTHER_TOKEN = "ghp-other-token-value-42"

BENCHMARK = """\
code: B1
concept: The output is right.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
cases:
  - {id: c0, source_narrative: n, candidate_output: o}
"""


@dataclass
class Script:
    """What the fake server answers: an HTTP status with the request echoed, or a verdict."""

    status: int = 200
    verdict: Any = field(default_factory=lambda: {"reason": "fine", "pass": True})
    headers: dict[str, str] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)


class Handler(BaseHTTPRequestHandler):
    script: Script

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.script.requests.append({"auth": self.headers.get("Authorization"), "body": body})
        if self.script.status != 200:  # a server that echoes the request, credentials included
            payload: dict[str, Any] = {
                "error": {
                    "message": f"bad request; you sent Authorization: {self.headers.get('Authorization')}"
                }
            }
        else:
            content = json.dumps(self.script.verdict)
            payload = {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": "fake-judge",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            }
        data = json.dumps(payload).encode()
        self.send_response(self.script.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in self.script.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    yield from serve()


@pytest.fixture
def other_server() -> Iterator[tuple[str, Script]]:
    yield from serve()


def serve() -> Iterator[tuple[str, Script]]:
    script = Script()
    handler = type("ScriptedHandler", (Handler,), {"script": script})
    httpd = ThreadingHTTPServer(("0.0.0.0", 0), handler)  # 127.0.0.2 reaches it too
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        httpd.shutdown()
        httpd.server_close()


def run(pytester: pytest.Pytester, url: str, *args: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\nllmjudge_attempts = 2\n")
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "--llmjudge-cache=off",
        "--junitxml=out.xml",
        "-rA",
        "--llmjudge-model=fake-judge",
        f"--llmjudge-base-url={url}",
        "benchmarks",
        *args,
    )


@pytest.mark.parametrize("status", [400, 500])
def test_an_error_body_echoing_the_api_key_never_shows_it(
    pytester: pytest.Pytester, server: tuple[str, Script], monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    url, script = server
    script.status = status
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", OTHER_TOKEN)
    result = run(pytester, url)
    out = result.stdout.str() + result.stderr.str()
    assert script.requests and script.requests[0]["auth"] == f"Bearer {SECRET}"  # it was sent...
    assert "judge ERROR" in out and "[redacted]" in out  # ...and the error is shown...
    for text in (out, (pytester.path / "out.xml").read_text()):
        assert SECRET not in text and "Bearer sk-" not in text  # ...without the key


def test_each_attempt_is_one_request(pytester: pytest.Pytester, server: tuple[str, Script]) -> None:
    url, script = server
    script.status = 500
    run(pytester, url)
    assert len(script.requests) == 2  # llmjudge_attempts = 2, and no SDK retries on top


def test_an_hour_long_retry_after_ends_the_case_instead_of_stalling_the_run(
    pytester: pytest.Pytester, server: tuple[str, Script]
) -> None:
    url, script = server
    script.status = 429
    script.headers = {"Retry-After": "3600"}
    result = run(pytester, url)
    assert "Retry-After 3600 s exceeds the 60 s cap" in result.stdout.str()
    assert len(script.requests) == 1


@pytest.mark.parametrize("value", ["yes", "on", 1, 1.0, "false", 0])
def test_a_verdict_that_is_not_a_json_boolean_is_invalid_output(
    pytester: pytest.Pytester, server: tuple[str, Script], value: Any
) -> None:
    url, script = server
    script.verdict = {"reason": "fine", "pass": value}
    result = run(pytester, url)
    out = result.stdout.str()
    assert "judge ERROR (invalid-output) after 2 attempts" in out, out
    assert "1 error" in out


def test_a_benchmark_base_url_off_the_run_gets_no_api_key(
    pytester: pytest.Pytester, server: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = server
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    # 127.0.0.2 is this machine too, but not a name the key may go to unasked
    elsewhere = url.replace("127.0.0.1", "127.0.0.2")
    pytester.makeini("[pytest]\nllmjudge_attempts = 1\n")
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(
        BENCHMARK + f"judge: {{model: fake-judge, base_url: '{elsewhere}'}}\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-cache=off", "benchmarks"
    )
    assert [r["auth"] for r in script.requests] == ["Bearer no-key-needed"]
    out = result.stdout.str()
    assert out.count("the API key is not sent there") == 1, out


def test_a_json_boolean_verdict_passes_with_one_request(
    pytester: pytest.Pytester, server: tuple[str, Script]
) -> None:
    url, script = server
    result = run(pytester, url)
    assert "2 passed" in result.stdout.str() and len(script.requests) == 1


def test_verdicts_of_one_server_never_answer_for_another_serving_the_same_model_name(
    pytester: pytest.Pytester, server: tuple[str, Script], other_server: tuple[str, Script]
) -> None:
    (url_a, a), (url_b, b) = server, other_server
    b.verdict = {"reason": "server B disagrees", "pass": False}
    cached = ["-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-model=fake-judge", "benchmarks"]
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    assert "2 passed" in pytester.runpytest_subprocess(*cached, f"--llmjudge-base-url={url_a}").stdout.str()
    result = pytester.runpytest_subprocess(*cached, f"--llmjudge-base-url={url_b}")
    assert len(a.requests) == len(b.requests) == 1  # B was asked, not answered with A's verdict
    assert "server B disagrees" in result.stdout.str()


def test_a_gguf_judge_label_changes_with_the_file_not_just_its_name(tmp_path: Path) -> None:
    from pytest_llmjudge.judging.models import judge_label

    model = tmp_path / "judge.gguf"
    model.write_bytes(b"GGUF" + bytes(3 << 20))
    first = judge_label(f"local:{model}")
    assert first.startswith("local:judge#")
    model.write_bytes(b"GGUF" + bytes(3 << 20) + b"retrained")
    assert judge_label(f"local:{model}") != first
