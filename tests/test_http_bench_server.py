"""The loopback judge of ``bench/throughput.py --http`` (``bench/http_judge.py``): it answers chat
completions as the configured model after the configured latency, many at once, and keeps
connections alive or not as told."""

from __future__ import annotations

import http.client
import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from http_judge import JudgeServer, serve_judge

BODY = json.dumps({"model": "any", "messages": [{"role": "user", "content": "Is this right?"}]})


def complete(connection: http.client.HTTPConnection) -> tuple[http.client.HTTPResponse, dict[str, Any]]:
    connection.request("POST", "/v1/chat/completions", BODY, {"Content-Type": "application/json"})
    answer = connection.getresponse()
    return answer, json.loads(answer.read())


def connect(server: JudgeServer) -> http.client.HTTPConnection:
    host, port = server.base_url.removeprefix("http://").removesuffix("/v1").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=30)


def test_a_chat_completion_comes_from_the_configured_model_after_the_latency() -> None:
    with serve_judge(latency=0.05, model="judge-under-test") as server:
        connection = connect(server)
        start = time.perf_counter()
        answer, completion = complete(connection)
        seconds = time.perf_counter() - start
        stats = server.stats()
    assert answer.status == 200
    assert completion["model"] == "judge-under-test"
    assert json.loads(completion["choices"][0]["message"]["content"]) == {
        "reason": "every negated finding stays absent in the output",
        "pass": True,
    }
    assert 0.05 <= seconds < 5
    assert stats["completions"] == 1 and 0.05 <= stats["seconds"][0] < 1
    assert stats["sample_request"] == json.loads(BODY)


def test_requests_in_flight_are_answered_together() -> None:
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(BODY)}\r\n\r\n{BODY}"
    ).encode()
    with serve_judge(latency=0.3) as server:
        port = int(server.base_url.rsplit(":", 1)[1].removesuffix("/v1"))
        sockets = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(4)]
        for sock in sockets:
            sock.sendall(request)
        answers = [sock.recv(65536) for sock in sockets]
        stats = server.stats()
    assert all(answer.startswith(b"HTTP/1.1 200 OK") for answer in answers)
    assert stats["completions"] == 4 and stats["peak"] == 4


def test_keep_alive_serves_requests_on_one_connection_and_without_it_each_is_closed() -> None:
    with serve_judge(latency=0.0, keep_alive=True) as server:
        connection = connect(server)
        first, _ = complete(connection)
        sock = connection.sock
        second, _ = complete(connection)
        assert first.getheader("Connection") == second.getheader("Connection") == "keep-alive"
        assert connection.sock is sock is not None  # the same connection
    with serve_judge(latency=0.0, keep_alive=False) as server:
        answer, _ = complete(connect(server))
    assert answer.getheader("Connection") == "close"
