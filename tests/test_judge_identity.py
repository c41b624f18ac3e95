"""Which judge answered: recorded per verdict, never mixed or compared across a change silently.

Every run here judges against the loopback OpenAI-compatible server, whose answers name a
configurable model (the provider's resolved snapshot) and ``system_fingerprint``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, results_file, run_judged, serve, write_benchmark


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    with serve(model="fake-judge-2024-07-18", system_fingerprint="fp_a") as server:
        yield server


def test_the_results_file_and_summary_name_the_snapshot_and_fingerprint_that_answered(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    write_benchmark(pytester, 2)
    result = run_judged(pytester, fake, "--llmjudge-results=run.json")
    assert result.ret == 0
    (benchmark,) = results_file(pytester, "run.json")["benchmarks"]
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
    again = run_judged(pytester, fake, "--llmjudge-results=again.json")
    (benchmark,) = results_file(pytester, "again.json")["benchmarks"]
    samples = [s for c in benchmark["cases"] for s in c["samples"]]
    assert [(s["cached"], s["answered_by"]) for s in samples] == [(True, answered)] * 2
    assert again.ret == 0


def test_a_baseline_of_another_snapshot_is_judge_changed_and_fails_closed(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    write_benchmark(pytester, 3)
    assert run_judged(pytester, fake, "--llmjudge-results=base.json").ret == 0
    fake.model = "fake-judge-2025-01-31"  # the provider moved the alias
    args = ("--llmjudge-cache=refresh", "--llmjudge-baseline=base.json", "--llmjudge-results=now.json")
    result = run_judged(pytester, fake, *args, "--llmjudge-fail-on=regression")
    assert result.ret == 1
    both = "baseline judged by *as fake-judge-2024-07-18*, this run by *as fake-judge-2025-01-31*"
    result.stdout.fnmatch_lines([f"*gate B1 failed: judge changed: {both}*--llmjudge-baseline*"])
    (comparison,) = results_file(pytester, "now.json")["comparison"]
    assert comparison["verdict"] == "judge changed"
    assert "2024-07-18" in comparison["judge_change"] and "2025-01-31" in comparison["judge_change"]
    # without --llmjudge-fail-on the comparison says so and the run stands
    quiet = run_judged(pytester, fake, *args[:2])
    assert quiet.ret == 0
    quiet.stdout.fnmatch_lines(["*B1*judge changed*", f"*B1: judge changed: {both}*"])


def test_a_fingerprint_change_alone_is_a_warning_not_a_stop(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    write_benchmark(pytester, 3)
    assert run_judged(pytester, fake, "--llmjudge-results=base.json").ret == 0
    fake.system_fingerprint = "fp_b"
    result = run_judged(
        pytester, fake, "--llmjudge-cache=refresh", "--llmjudge-baseline=base.json",
        "--llmjudge-fail-on=regression", "--llmjudge-results=now.json",
    )  # fmt: skip
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*B1: judge fingerprint changed*fp_a*fp_b*the comparison stands*"])
    (comparison,) = results_file(pytester, "now.json")["comparison"]
    assert comparison["verdict"] != "judge changed" and "fp_b" in comparison["judge_change"]


def test_cached_verdicts_of_one_snapshot_mixed_with_new_calls_of_another_are_never_silent(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    write_benchmark(pytester, 2)
    assert run_judged(pytester, fake).ret == 0
    write_benchmark(pytester, 3)  # one more case: its call is answered by the new snapshot
    fake.model = "fake-judge-2025-01-31"
    result = run_judged(pytester, fake, "--llmjudge-results=mixed.json")
    result.stdout.fnmatch_lines(
        ["*B1: mixed judges: 2 verdict(s) of *2024-07-18*; 1 verdict(s) of *2025-01-31*--llmjudge-fail-on*"]
    )
    (benchmark,) = results_file(pytester, "mixed.json")["benchmarks"]
    assert {j["model"] for j in benchmark["judges"]} == {"fake-judge-2024-07-18", "fake-judge-2025-01-31"}
    gated = run_judged(pytester, fake, "--llmjudge-fail-on=regression")
    assert gated.ret == 1
    gated.stdout.fnmatch_lines(["*gate B1 failed: mixed judges: *--llmjudge-cache=refresh*"])
