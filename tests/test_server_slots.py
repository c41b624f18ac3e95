"""A local judge server is sent at most as many requests at once as it has slots, so no request
waits in the server's queue with its timeout running; a server that does not say its slots gets
the run's concurrency."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, benchmark_yaml, serve

BENCHMARK = benchmark_yaml(6)


@pytest.fixture
def slow_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    monkeypatch.delenv("LLMJUDGE_LOCAL_SERVER_URL", raising=False)
    with serve(delay=0.3) as fake:
        yield fake


def run(pytester: pytest.Pytester, url: str, *extra: str) -> pytest.RunResult:
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "benchmarks",
        f"--llmjudge-model=local:{url}",
        "--llmjudge-cache=off",
        "--llmjudge-concurrency=8",
        "--llmjudge-timeout=1",
        *extra,
    )


def test_a_one_slot_server_gets_one_request_at_a_time(
    pytester: pytest.Pytester, slow_server: FakeOpenAI
) -> None:
    slow_server.props = {"total_slots": 1}

    result = run(pytester, slow_server.url)

    result.assert_outcomes(passed=7)
    assert slow_server.peak == 1
    # six cases of 0.3 s each, one after another, under a 1 s timeout: the wait for the slot
    # is not part of any request's time, so nothing timed out or was retried
    assert len(slow_server.completions) == 6
    assert "0 retries" in result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"local judge fake-judge at {slow_server.url}/v1 (a server this run did not start)"]
    )


def test_a_server_that_does_not_say_its_slots_gets_the_run_concurrency(
    pytester: pytest.Pytester, slow_server: FakeOpenAI
) -> None:
    result = run(pytester, slow_server.url)

    result.assert_outcomes(passed=7)
    assert slow_server.peak == 6  # all six at once (concurrency 8)


def test_task_and_judge_calls_to_one_server_share_its_slots(
    pytester: pytest.Pytester, slow_server: FakeOpenAI
) -> None:
    slow_server.props = {"total_slots": 1}
    (pytester.path / "prompts").mkdir()
    (pytester.path / "prompts" / "p.yaml").write_text(
        'messages:\n  - role: user\n    content: "Narrative: {{ source_narrative }}"\n'
    )
    (pytester.path / "benchmarks").mkdir()
    cases = "\n".join(f"  - {{id: c{i}, source_narrative: n{i}}}" for i in range(6))
    (pytester.path / "benchmarks" / "T1.yaml").write_text(
        "code: T1\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\nthreshold: 0.5\n"
        f"task: {{model: 'local:{slow_server.url}', prompt_file: prompts/p.yaml}}\ncases:\n{cases}\n"
    )
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "benchmarks",
        f"--llmjudge-model=local:{slow_server.url}",
        "--llmjudge-cache=off",
        "--llmjudge-task-cache=off",
        "--llmjudge-concurrency=8",
        "--llmjudge-task-concurrency=8",
        "--llmjudge-timeout=1",
    )
    result.assert_outcomes(passed=7)
    assert slow_server.peak == 1  # six task and six judge calls, never two at once
    assert len(slow_server.completions) == 12 and "0 retries" in result.stdout.str()
