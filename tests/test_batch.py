"""--llmjudge-batch: judge calls through the provider's batch API (pydantic-ai's batching), against a
loopback server with the OpenAI files, batches and Responses endpoints (``fake_openai_batch``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from fake_openai_batch import FakeBatchServer, serve

CASES = 30
# gpt-4o-mini: a model genai-prices prices, served by the fake server through --llmjudge-base-url
MODEL = "gpt-4o-mini"


def benchmark(cases: int) -> str:
    lines = [
        f"  - {{id: c{i}, candidate_output: {'FAIL-ME' if i % 3 == 0 else 'fine'} {i}}}" for i in range(cases)
    ]
    return (
        "code: B1\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        "threshold: 0.5\ncases:\n" + "\n".join(lines) + "\n"
    )


@pytest.fixture
def fake() -> Iterator[FakeBatchServer]:
    with serve(polls=1) as server:
        yield server


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(benchmark(CASES))
    monkeypatch.setenv("LLMJUDGE_BATCH_POLL", "0.05")  # check batches at once, not after 30 s
    return pytester


def run(
    pytester: pytest.Pytester, fake: FakeBatchServer, name: str, *args: str
) -> tuple[Any, dict[str, Any]]:
    results = pytester.path / f"{name}.json"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "-rA",
        f"--llmjudge-model={MODEL}", f"--llmjudge-base-url={fake.url}/v1",
        f"--llmjudge-results={results}", *args, "benchmarks",
    )  # fmt: skip
    data = json.loads(results.read_text()) if results.exists() else {}
    return result, data


def verdicts(data: dict[str, Any]) -> dict[str, str]:
    return {case["id"]: case["result"] for b in data["benchmarks"] for case in b["cases"]}


def usd(data: dict[str, Any]) -> Decimal:
    return Decimal(str(data["totals"]["cost"]["usd"]))


def test_a_batched_run_sends_no_live_call_and_gives_the_live_verdicts_at_half_the_cost(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    live, live_data = run(project, fake, "live", "--llmjudge-cache=off")
    assert fake.live == CASES and fake.created_batches == 0, live.stdout.str()
    fake.live = 0

    batched, batch_data = run(project, fake, "batched", "--llmjudge-batch=on")
    out = batched.stdout.str()
    assert fake.live == 0, out
    assert fake.batched == CASES and fake.created_batches >= 1, out
    assert verdicts(batch_data) == verdicts(live_data)
    assert sorted(set(verdicts(batch_data).values())) == ["fail", "pass"]
    assert usd(batch_data) * 2 == usd(live_data) > 0

    rerun, rerun_data = run(project, fake, "rerun", "--llmjudge-batch=on")
    assert fake.live == 0 and fake.batched == CASES, rerun.stdout.str()  # every verdict cached
    assert verdicts(rerun_data) == verdicts(live_data)
