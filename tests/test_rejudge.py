"""One judge per gate: ``--llmjudge-rejudge-stale`` judges cached verdicts of another resolved
snapshot again, and ``--llmjudge-rejudge-baseline`` judges the baseline run's stored outputs with
this run's judge, reports the judge's drift on them and compares both runs on one judge.

Every run judges against the loopback OpenAI-compatible server, whose answers name a configurable
model (the provider's resolved snapshot); here its verdict depends on the output it is shown.
"""

from __future__ import annotations

import json
import re
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
        f"--llmjudge-base-url={fake.url}/v1", "--llmjudge-attempts=1", "--llmjudge-concurrency=4", *args,
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
    plain.stdout.fnmatch_lines(
        ["*gate B1 failed: mixed judges: 2 verdict(s) of *2024-07-18*(--llmjudge-rejudge-stale)*"]
    )
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


def _twenty(pytester: pytest.Pytester, bad: int = 0) -> None:
    """B1 of 20 cases; c18 and c19 say EDGEOUT (only snapshot B fails them), the first ``bad`` BADOUT."""
    outputs = {18: "EDGEOUT18", 19: "EDGEOUT19"} | {i: f"BADOUT{i}" for i in range(bad)}
    _suite(pytester, 20, outputs)


def test_rejudging_the_baseline_measures_the_judges_drift_and_finds_a_real_regression(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _twenty(pytester)
    assert _run(pytester, fake, "--llmjudge-results=base.json").ret == 0  # all 20 pass under A
    fake.model = B  # the provider moved the alias; the candidate breaks 6 cases
    _twenty(pytester, bad=6)
    gated = ("--llmjudge-baseline=base.json", "--llmjudge-fail-on=regression")
    changed = _run(pytester, fake, *gated)  # (the cache of A's verdicts is kept for the next run)
    changed.stdout.fnmatch_lines(
        ["*B1: mixed judges*", "*gate B1 failed: judge changed*(--llmjudge-rejudge-baseline)*"]
    )
    outputs = ("--llmjudge-results=now.json", "--llmjudge-html=now.html")
    result = _run(pytester, fake, *gated, "--llmjudge-rejudge-baseline", *outputs)
    # today's judge: the 14 outputs of both runs that A had judged (the first call also learns
    # which snapshot answers: all 20 of this run's verdicts were cached, of two snapshots), and
    # the 6 outputs only the baseline had (A's cached verdicts of them are stale too)
    sent = [sent_text(r.body) for r in fake.completions]
    assert len(sent) == 21
    only_baseline = [found for text in sent for found in re.findall(r"\bo[0-5]\b", text)]
    assert sorted(only_baseline) == [f"o{i}" for i in range(6)]
    assert result.ret == 1
    drift = (
        "*B1: judge drift on the baseline's outputs: 2 of 20 verdict(s) flipped (2 pass → fail, 0 fail → pass"
    )
    result.stdout.fnmatch_lines([f"{drift}; exact McNemar p = 0.5)*judged again by *{B}*"])
    result.stdout.fnmatch_lines(["*gate B1 failed: regression against the baseline: 6 case(s) pass → fail*"])
    assert "judge changed" not in result.stdout.str() and "mixed judges" not in result.stdout.str()
    data = _results(pytester, "now.json")
    (comparison,) = data["comparison"]
    assert (comparison["b"], comparison["c"], comparison["p_value"]) == (6, 0, 0.03125)
    assert comparison["verdict"] == "regression" and comparison["judge_change"] is None
    (row,) = data["judge_drift"]
    assert (row["rejudged"], row["pass_to_fail"], row["fail_to_pass"], row["p_value"]) == (20, 2, 0, 0.5)
    assert A in row["baseline_judges"] and B in row["judge"]
    html = (pytester.path / "now.html").read_text()
    assert "judge drift on the baseline's outputs" in html and "2 pass → fail" in html


def test_a_baseline_without_stored_outputs_is_a_usage_error_naming_it(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _suite(pytester, 2)
    assert _run(pytester, fake, "--llmjudge-results=base.json").ret == 0
    old = _results(pytester, "base.json")
    old["format"] = 1  # a format-1 file stored no outputs
    for case in old["benchmarks"][0]["cases"]:
        del case["produced"]
    (pytester.path / "old.json").write_text(json.dumps(old))
    result = _run(pytester, fake, "--llmjudge-baseline=old.json", "--llmjudge-rejudge-baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not fake.completions
    named = "--llmjudge-baseline old.json: 2 compared case(s) have no stored output to judge again"
    result.stderr.fnmatch_lines([f"*{named} (B1::c0, B1::c1)*"])
    alone = _run(pytester, fake, "--llmjudge-rejudge-baseline")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    alone.stderr.fnmatch_lines(
        ["*--llmjudge-rejudge-baseline*give its results file with --llmjudge-baseline FILE*"]
    )
    replay = _run(
        pytester,
        fake,
        "--llmjudge-baseline=base.json",
        "--llmjudge-rejudge-baseline",
        "--llmjudge-cache=replay",
    )
    assert replay.ret == pytest.ExitCode.USAGE_ERROR
    replay.stderr.fnmatch_lines(["*--llmjudge-rejudge-baseline*cannot with --llmjudge-cache=replay*"])


def test_both_switches_are_in_help_and_also_come_from_the_environment_and_the_ini_file(
    pytester: pytest.Pytester,
) -> None:
    from pytest_llmjudge.suite.settings import resolve

    shown = pytester.runpytest("--help").stdout.str()
    assert "--llmjudge-rejudge-stale" in shown and "--llmjudge-rejudge-baseline" in shown
    settings = resolve(
        lambda name: None,
        lambda name: "true" if name == "rejudge_stale" else None,
        {"LLMJUDGE_REJUDGE_BASELINE": "1"},
    )
    assert settings.rejudge_stale and settings.rejudge_baseline
