"""One judge per gate: ``--llmjudge-rejudge-stale`` judges cached verdicts of another resolved
snapshot again, and ``--llmjudge-rejudge-baseline`` judges the baseline run's stored outputs with
this run's judge, reports the judge's drift on them and compares both runs on one judge.

Every run judges against the loopback OpenAI-compatible server, whose answers name a configurable
model (the provider's resolved snapshot); here its verdict depends on the output it is shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, benchmark_yaml, sent_text, serve

A, B = "fake-judge-2024-07-18", "fake-judge-2025-01-31"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    with serve(model=A, system_fingerprint="fp_a") as server:
        server.answer = lambda body: _verdict(server.model, sent_text(body))
        yield server


def _verdict(snapshot: str, text: str) -> dict[str, Any]:
    """Snapshot A fails outputs saying BADOUT; snapshot B also those saying EDGEOUT (its drift)."""
    failing = "BADOUT" in text or (snapshot == B and "EDGEOUT" in text)
    return {"reason": "judged", "pass": not failing}


def _suite(pytester: pytest.Pytester, cases: int, outputs: dict[int, str] | None = None) -> None:
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    text = benchmark_yaml(cases)
    for index, output in (outputs or {}).items():
        text = text.replace(f"candidate_output: o{index}}}", f"candidate_output: {output}}}")
    (pytester.path / "benchmarks" / "B1.yaml").write_text(text)


def _run(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    fake.requests.clear()
    return pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", "--llmjudge-model=fake-judge",
        f"--llmjudge-base-url={fake.url}/v1", "--llmjudge-attempts=1", *args,
    )  # fmt: skip


def _results(pytester: pytest.Pytester, name: str) -> Any:
    return json.loads((pytester.path / name).read_text())


def test_stale_cached_verdicts_are_rejudged_so_the_gate_rests_on_one_judge(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _suite(pytester, 2)
    assert _run(pytester, fake).ret == 0
    assert len(fake.completions) == 2
    fake.model = B  # the provider moved the alias
    _suite(pytester, 3)  # one new case: its call is answered by B
    plain = _run(pytester, fake, "--llmjudge-fail-on=regression")
    assert len(fake.completions) == 1  # the default marks the mix; it spends nothing more
    assert plain.ret == 1
    plain.stdout.fnmatch_lines(["*gate B1 failed: mixed judges: 2 verdict(s) of *2024-07-18*"])
    _suite(pytester, 4)  # one more new case, now with the flag
    result = _run(
        pytester,
        fake,
        "--llmjudge-rejudge-stale",
        "--llmjudge-fail-on=regression",
        "--llmjudge-results=r.json",
    )
    assert len(fake.completions) == 3  # the new case, and the two verdicts A gave (B's is kept)
    assert result.ret == 0
    assert "mixed judges" not in result.stdout.str()
    (benchmark,) = _results(pytester, "r.json")["benchmarks"]
    assert [(j["model"], j["verdicts"]) for j in benchmark["judges"]] == [(B, 4)]
    # the new verdicts were cached: the next run calls nothing and is still judged by B alone
    again = _run(pytester, fake, "--llmjudge-rejudge-stale", "--llmjudge-fail-on=regression")
    assert len(fake.completions) == 0 and again.ret == 0
