"""Local judges and judge setup under pytest-xdist: the controller starts the local judge server
only when a worker must judge a case, one server for all workers, and a run that cannot judge
says why on each case instead of crashing its workers."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, benchmark_yaml, serve

from pytest_llmjudge.local.broker import ServerBroker, request_server
from pytest_llmjudge.local.model_file import LocalServerError

BENCHMARK = benchmark_yaml(3)


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    monkeypatch.delenv("LLMJUDGE_LOCAL_SERVER_URL", raising=False)
    with serve() as fake:
        yield fake


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", *args)


def test_a_refused_local_server_url_is_reported_at_once(pytester: pytest.Pytester) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    began = time.monotonic()

    result = run(pytester, f"--llmjudge-model=local:{url}", "--llmjudge-cache=off")

    assert time.monotonic() - began < 10
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*local:{url}/v1: no OpenAI-compatible server answers there*refused*"])


def test_a_fully_cached_xdist_run_does_not_reach_the_local_server(
    pytester: pytest.Pytester, fake_server: FakeOpenAI
) -> None:
    args = ["-n", "2", f"--llmjudge-model=local:{fake_server.url}"]
    first = run(pytester, *args)
    first.assert_outcomes(passed=4)
    assert len(fake_server.completions) == 3
    first.stdout.fnmatch_lines([f"local judge fake-judge *{fake_server.url}/v1*"])
    fake_server.requests.clear()
    fake_server.stop()  # nothing listens there any more

    rerun = run(pytester, *args)

    rerun.assert_outcomes(passed=4)
    assert "3 cache hit(s)" in rerun.stdout.str()
    assert fake_server.requests == []
    assert "local judge" not in rerun.stdout.str()  # no server was started or reached


def test_an_xdist_run_with_no_judge_model_errors_each_case_with_the_reason(pytester: pytest.Pytester) -> None:
    result = run(pytester, "-n", "2")

    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.fnmatch_lines(["*judge ERROR (judge-setup)*need a judge model and none is configured*"])


def test_an_xdist_local_server_that_cannot_start_errors_each_case_with_the_reason(
    pytester: pytest.Pytester,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"

    result = run(pytester, "-n", "2", f"--llmjudge-model=local:{url}", "--llmjudge-cache=off")

    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.fnmatch_lines(["*judge ERROR (judge-setup)*no OpenAI-compatible server answers there*"])


def test_the_broker_starts_the_server_once_for_every_worker() -> None:
    started = []

    def start() -> str:
        started.append(1)
        time.sleep(0.2)
        return "http://127.0.0.1:1234/v1"

    broker = ServerBroker(start)
    assert started == []  # nothing starts until a worker asks
    urls: list[str] = []
    askers = [threading.Thread(target=lambda: urls.append(request_server(broker.address))) for _ in range(4)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    broker.close()
    assert urls == ["http://127.0.0.1:1234/v1"] * 4
    assert started == [1]


def test_a_server_that_fails_to_start_is_the_same_error_for_every_worker() -> None:
    def start() -> str:
        raise LocalServerError("the local judge server exited with status 1 while starting")

    broker = ServerBroker(start)
    for _ in range(2):
        with pytest.raises(LocalServerError, match="exited with status 1 while starting"):
            request_server(broker.address)
    broker.close()


def test_a_request_without_the_brokers_token_is_refused() -> None:
    broker = ServerBroker(lambda: "http://127.0.0.1:1234/v1")
    host_port = broker.address.split("@", 1)[1]
    with pytest.raises(LocalServerError, match="refused"):
        request_server(f"wrong-token@{host_port}")
    broker.close()


def test_a_closed_broker_answers_no_worker_and_takes_its_address_back() -> None:
    environ: dict[str, str] = {}
    broker = ServerBroker(lambda: "http://127.0.0.1:1234/v1")
    broker.export(environ)
    address = environ["LLMJUDGE_LOCAL_SERVER_BROKER"]
    assert request_server(address, timeout=5) == "http://127.0.0.1:1234/v1"
    broker.close()
    assert environ == {}
    with pytest.raises(LocalServerError, match="did not answer"):
        request_server(address, timeout=2)  # it kept listening after close() before
