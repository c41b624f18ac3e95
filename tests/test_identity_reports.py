"""Who answered, as the HTML report, an errored call and ``llmjudge compare`` show it.

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


def test_the_html_header_names_the_snapshot_and_fingerprint_that_answered(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    write_benchmark(pytester, 2)
    assert run_judged(pytester, fake, "--llmjudge-html=report.html").ret == 0
    page = (pytester.path / "report.html").read_text()
    header = page[page.index("<header") : page.index("</header>")]
    assert (
        "answered as <code>fake-judge-2024-07-18</code> (fingerprint <code>fp_a</code>) · 2 verdict(s)"
        in header
    )
    assert "more than one judge answered" not in header
    # one more case, answered by the provider's next snapshot: the header names both
    write_benchmark(pytester, 3)
    fake.model, fake.system_fingerprint = "fake-judge-2025-01-31", "fp_b"
    run_judged(pytester, fake, "--llmjudge-html=mixed.html")
    page = (pytester.path / "mixed.html").read_text()
    header = page[page.index("<header") : page.index("</header>")]
    assert "<code>fake-judge-2024-07-18</code> (fingerprint <code>fp_a</code>) · 2 verdict(s)" in header
    assert "<code>fake-judge-2025-01-31</code> (fingerprint <code>fp_b</code>) · 1 verdict(s)" in header
    assert "more than one judge answered" in header


def test_an_errored_judge_call_claims_no_judge(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    write_benchmark(pytester, 1)
    fake.verdict = "not a verdict"  # the server answers, naming its snapshot, but no verdict is read
    result = run_judged(pytester, fake, "--llmjudge-results=run.json", "--llmjudge-html=report.html")
    (benchmark,) = results_file(pytester, "run.json")["benchmarks"]
    ((sample,),) = [c["samples"] for c in benchmark["cases"]]
    assert sample["error"] and sample["pass"] is None
    assert sample["answered_by"] is None
    assert benchmark["judges"] == []
    assert "answered as" not in result.stdout.str()
    assert "answered as" not in (pytester.path / "report.html").read_text()


def test_llmjudge_compare_names_both_judges_and_fails_closed_on_a_change(
    pytester: pytest.Pytester, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_llmjudge.cli.main import main

    write_benchmark(pytester, 3)
    assert run_judged(pytester, fake, "--llmjudge-results=base.json").ret == 0
    fake.model = "fake-judge-2025-01-31"  # the provider moved the alias
    now = ("--llmjudge-cache=refresh", "--llmjudge-results=now.json")
    run_judged(pytester, fake, *now, "--llmjudge-baseline=base.json", "--llmjudge-html=now.html")
    fake.model, fake.system_fingerprint = "fake-judge-2024-07-18", "fp_b"  # the backend alone moved
    assert run_judged(pytester, fake, "--llmjudge-cache=refresh", "--llmjudge-results=fp.json").ret == 0
    base, changed, rotated = (str(pytester.path / f"{name}.json") for name in ("base", "now", "fp"))
    capsys.readouterr()

    assert main(["compare", base, changed]) == 0
    out = capsys.readouterr().out
    assert "baseline judge: openai:fake-judge@" in out and "candidate judge: openai:fake-judge@" in out
    assert "answered as fake-judge-2024-07-18 (fingerprint fp_a)" in out.split("candidate judge")[0]
    assert "answered as fake-judge-2025-01-31 (fingerprint fp_a)" in out.split("candidate judge")[1]
    (row,) = [line for line in out.splitlines() if line.startswith("  B1 ")]
    assert row.endswith("judge changed")
    assert "B1: judge changed: baseline judged by" in out

    assert main(["compare", base, changed, "--fail-on", "regression"]) == 1
    err = capsys.readouterr().err
    assert "B1: judge changed: " in err and "the comparison measures the judge too" in err
    assert "pin the judge to a dated snapshot" in err

    # a fingerprint change alone is said, and the comparison stands
    assert main(["compare", base, rotated, "--fail-on", "regression"]) == 0
    out = capsys.readouterr().out
    assert "B1: judge fingerprint changed: " in out and "fp_a" in out and "fp_b" in out
    (row,) = [line for line in out.splitlines() if line.startswith("  B1 ")]
    assert not row.endswith("judge changed")

    # the run's own report says why its comparison is not better or worse
    page = (pytester.path / "now.html").read_text()
    section = page[page.index('<section id="comparison">') :]
    assert "judge-change" in section and "judge changed: baseline judged by" in section
