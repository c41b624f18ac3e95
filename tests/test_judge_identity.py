"""Which judge answered: recorded per verdict, never mixed or compared across a change silently.

Every run here judges against the loopback OpenAI-compatible server, whose answers name a
configurable model (the provider's resolved snapshot) and ``system_fingerprint``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, benchmark_yaml, serve


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    with serve(model="fake-judge-2024-07-18", system_fingerprint="fp_a") as server:
        yield server


def _suite(pytester: pytest.Pytester, cases: int) -> None:
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(benchmark_yaml(cases))


def _run(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", "--llmjudge-model=fake-judge",
        f"--llmjudge-base-url={fake.url}/v1", "--llmjudge-attempts=1", *args,
    )  # fmt: skip


def _results(pytester: pytest.Pytester, name: str) -> Any:
    return json.loads((pytester.path / name).read_text())


def test_the_results_file_and_summary_name_the_snapshot_and_fingerprint_that_answered(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _suite(pytester, 2)
    result = _run(pytester, fake, "--llmjudge-results=run.json")
    assert result.ret == 0
    (benchmark,) = _results(pytester, "run.json")["benchmarks"]
    answered = {"model": "fake-judge-2024-07-18", "fingerprint": "fp_a"}
    assert [s["answered_by"] for c in benchmark["cases"] for s in c["samples"]] == [answered, answered]
    (seen,) = benchmark["judges"]
    assert (seen["model"], seen["fingerprint"], seen["verdicts"]) == ("fake-judge-2024-07-18", "fp_a", 2)
    said = [
        line for line in result.outlines if "answered as fake-judge-2024-07-18 (fingerprint fp_a)" in line
    ]
    assert len(said) == 1 and said[0].startswith("judge ")
    result.stdout.fnmatch_lines(["*is an alias: pin --llmjudge-model=*fake-judge-2024-07-18*"])
    # a cache hit says who answered the call it saved
    again = _run(pytester, fake, "--llmjudge-results=again.json")
    (benchmark,) = _results(pytester, "again.json")["benchmarks"]
    samples = [s for c in benchmark["cases"] for s in c["samples"]]
    assert [(s["cached"], s["answered_by"]) for s in samples] == [(True, answered)] * 2
    assert again.ret == 0


def test_a_baseline_of_another_snapshot_is_judge_changed_and_fails_closed(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _suite(pytester, 3)
    assert _run(pytester, fake, "--llmjudge-results=base.json").ret == 0
    fake.model = "fake-judge-2025-01-31"  # the provider moved the alias
    args = ("--llmjudge-cache=refresh", "--llmjudge-baseline=base.json", "--llmjudge-results=now.json")
    result = _run(pytester, fake, *args, "--llmjudge-fail-on=regression")
    assert result.ret == 1
    both = "baseline judged by *as fake-judge-2024-07-18*, this run by *as fake-judge-2025-01-31*"
    result.stdout.fnmatch_lines([f"*gate B1 failed: judge changed: {both}*--llmjudge-baseline*"])
    (comparison,) = _results(pytester, "now.json")["comparison"]
    assert comparison["verdict"] == "judge changed"
    assert "2024-07-18" in comparison["judge_change"] and "2025-01-31" in comparison["judge_change"]
    # without --llmjudge-fail-on the comparison says so and the run stands
    quiet = _run(pytester, fake, *args[:2])
    assert quiet.ret == 0
    quiet.stdout.fnmatch_lines(["*B1*judge changed*", f"*B1: judge changed: {both}*"])


def test_a_fingerprint_change_alone_is_a_warning_not_a_stop(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _suite(pytester, 3)
    assert _run(pytester, fake, "--llmjudge-results=base.json").ret == 0
    fake.system_fingerprint = "fp_b"
    result = _run(
        pytester, fake, "--llmjudge-cache=refresh", "--llmjudge-baseline=base.json",
        "--llmjudge-fail-on=regression", "--llmjudge-results=now.json",
    )  # fmt: skip
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*B1: judge fingerprint changed*fp_a*fp_b*the comparison stands*"])
    (comparison,) = _results(pytester, "now.json")["comparison"]
    assert comparison["verdict"] != "judge changed" and "fp_b" in comparison["judge_change"]


def test_cached_verdicts_of_one_snapshot_mixed_with_new_calls_of_another_are_never_silent(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _suite(pytester, 2)
    assert _run(pytester, fake).ret == 0
    _suite(pytester, 3)  # one more case: its call is answered by the new snapshot
    fake.model = "fake-judge-2025-01-31"
    result = _run(pytester, fake, "--llmjudge-results=mixed.json")
    result.stdout.fnmatch_lines(
        ["*B1: mixed judges: 2 verdict(s) of *2024-07-18*; 1 verdict(s) of *2025-01-31*--llmjudge-fail-on*"]
    )
    (benchmark,) = _results(pytester, "mixed.json")["benchmarks"]
    assert {j["model"] for j in benchmark["judges"]} == {"fake-judge-2024-07-18", "fake-judge-2025-01-31"}
    gated = _run(pytester, fake, "--llmjudge-fail-on=regression")
    assert gated.ret == 1
    gated.stdout.fnmatch_lines(["*gate B1 failed: mixed judges: *--llmjudge-cache=refresh*"])
