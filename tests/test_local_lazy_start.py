"""A run with a local judge reaches the judge server only when a case needs it: a fully cached
run answers from the cache with the server gone."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, benchmark_yaml, serve

BENCHMARK = benchmark_yaml(2)


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAI]:
    with serve() as fake:
        yield fake


def test_a_fully_cached_run_does_not_reach_the_local_judge_server(
    pytester: pytest.Pytester,
    fake_server: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    monkeypatch.delenv("LLMJUDGE_LOCAL_SERVER_URL", raising=False)
    url = fake_server.url
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    args = ["-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", f"--llmjudge-model=local:{url}"]
    pytester.runpytest(*args).assert_outcomes(passed=3)  # the prompt item and two cases
    assert [request.path for request in fake_server.requests].count("/v1/chat/completions") == 2
    fake_server.requests.clear()
    fake_server.stop()  # nothing listens there any more

    rerun = pytester.runpytest(*args)

    rerun.assert_outcomes(passed=3)
    assert "2 cache hit(s)" in rerun.stdout.str()
    assert fake_server.requests == []
