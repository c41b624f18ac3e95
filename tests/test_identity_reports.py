"""Who answered, as the HTML report, an errored call and ``llmjudge compare`` show it.

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


def test_the_html_header_names_the_snapshot_and_fingerprint_that_answered(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _suite(pytester, 2)
    assert _run(pytester, fake, "--llmjudge-html=report.html").ret == 0
    page = (pytester.path / "report.html").read_text()
    header = page[page.index("<header") : page.index("</header>")]
    assert (
        "answered as <code>fake-judge-2024-07-18</code> (fingerprint <code>fp_a</code>) · 2 verdict(s)"
        in header
    )
    assert "more than one judge answered" not in header
    # one more case, answered by the provider's next snapshot: the header names both
    _suite(pytester, 3)
    fake.model, fake.system_fingerprint = "fake-judge-2025-01-31", "fp_b"
    _run(pytester, fake, "--llmjudge-html=mixed.html")
    page = (pytester.path / "mixed.html").read_text()
    header = page[page.index("<header") : page.index("</header>")]
    assert "<code>fake-judge-2024-07-18</code> (fingerprint <code>fp_a</code>) · 2 verdict(s)" in header
    assert "<code>fake-judge-2025-01-31</code> (fingerprint <code>fp_b</code>) · 1 verdict(s)" in header
    assert "more than one judge answered" in header


def test_an_errored_judge_call_claims_no_judge(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    _suite(pytester, 1)
    fake.verdict = "not a verdict"  # the server answers, naming its snapshot, but no verdict is read
    result = _run(pytester, fake, "--llmjudge-results=run.json", "--llmjudge-html=report.html")
    (benchmark,) = _results(pytester, "run.json")["benchmarks"]
    ((sample,),) = [c["samples"] for c in benchmark["cases"]]
    assert sample["error"] and sample["pass"] is None
    assert sample["answered_by"] is None
    assert benchmark["judges"] == []
    assert "answered as" not in result.stdout.str()
    assert "answered as" not in (pytester.path / "report.html").read_text()
