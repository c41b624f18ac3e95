"""--llmjudge-batch: judge calls through the provider's batch API (pydantic-ai's batching), against a
loopback server with the OpenAI files, batches and Responses endpoints (``fake_openai_batch``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fake_openai_batch import FakeBatchServer, default_rule, serve

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


def test_submit_ends_pending_and_collect_finishes_without_submitting_again(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    submitted, _ = run(project, fake, "submitted", "--llmjudge-batch=submit")
    out = submitted.stdout.str()
    assert submitted.ret != 0, out
    assert fake.created_batches == 1 and fake.live == 0, out
    assert f"pending: {CASES} requests in 1 batch; collect with pytest --llmjudge-batch=collect" in out
    assert len(list((project.path / ".llmjudge" / "batches").glob("*.json"))) == CASES

    collected, data = run(project, fake, "collected", "--llmjudge-batch=collect")
    out = collected.stdout.str()
    assert fake.created_batches == 1 and fake.live == 0, out  # no batch submitted again
    assert fake.batched == CASES
    assert sorted(set(verdicts(data).values())) == ["fail", "pass"], out
    assert list((project.path / ".llmjudge" / "batches").glob("*.json")) == []


def test_a_judge_without_a_batch_api_is_a_usage_error_before_any_call(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-model=local:http://127.0.0.1:9",
        "--llmjudge-batch=on", "benchmarks",
    )  # fmt: skip
    out = result.stdout.str() + result.stderr.str()
    assert result.ret != 0
    assert "has no batch API" in out and "anthropic:" in out, out
    assert "Traceback" not in out


@pytest.mark.parametrize("endpoint", ["POST /v1/files", "POST /v1/batches", "GET /v1/batches"])
def test_a_failing_batch_endpoint_is_an_error_naming_server_and_endpoint(
    project: pytest.Pytester, fake: FakeBatchServer, endpoint: str
) -> None:
    (project.path / "benchmarks" / "B1.yaml").write_text(benchmark(2))
    fake.failures[endpoint] = 400
    result, data = run(project, fake, "failed", "--llmjudge-batch=on")
    out = result.stdout.str()
    assert result.ret != 0
    assert set(verdicts(data).values()) == {"error"}, out
    path = endpoint.split()[1]
    assert f"HTTP 400 from {fake.url}{path}" in out, out


def test_the_estimate_shows_the_batch_price_next_to_the_live_one(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", f"--llmjudge-model={MODEL}",
        f"--llmjudge-base-url={fake.url}/v1", "--llmjudge-estimate", "benchmarks", "--llmjudge-batch",
    )  # fmt: skip
    out = result.stdout.str()
    live = re.search(r"^total: .*?, (\$[\d.]+) \(", out, re.M)
    batch = re.search(r"^total at the batch rate \(--llmjudge-batch\): .*?, (\$[\d.]+) \(", out, re.M)
    assert live and batch, out
    assert Decimal(batch.group(1)[1:]) * 2 == pytest.approx(Decimal(live.group(1)[1:]), rel=Decimal("0.001"))
    assert fake.requests == []  # an estimate calls nothing


def settings_of(**given: str) -> Any:
    from pytest_llmjudge.suite.settings import resolve

    return resolve(lambda name: given.get(name), lambda name: None, env={})


def test_batch_settings_read_modes_and_durations_and_put_every_call_in_flight() -> None:
    assert settings_of().batch == "off" and settings_of().concurrency == 16
    batched = settings_of(batch="submit", batch_wait="90m")
    assert (batched.batch, batched.batch_wait, batched.concurrency) == ("submit", 5400.0, 50_000)
    assert settings_of(batch="on", concurrency="8").concurrency == 8  # a given concurrency holds
    with pytest.raises(ValueError, match="'benchmarks' is not one of off, on, submit, collect"):
        settings_of(batch="benchmarks")
    with pytest.raises(ValueError, match="--llmjudge-batch-wait: must be a positive duration"):
        settings_of(batch_wait="0h")


def test_pending_requests_are_counted_by_request_and_batch(tmp_path: Path) -> None:
    from pytest_llmjudge.models.pending_batches import PendingRecord, PendingStore, pending_reason

    store = PendingStore(tmp_path / "batches")
    assert pending_reason(store) is None
    key = store.key("digest", "openai:gpt-4o-mini")
    store.put(key, PendingRecord("batch-1", "r1", {"parts": []}))
    hint = "collect with pytest --llmjudge-batch=collect (the same suite and judge)"
    assert pending_reason(store) == f"pending: 1 request in 1 batch; {hint}"
    store.put(key, PendingRecord("batch-2", "r2", {}))
    store.put(store.key("other", "openai:gpt-4o-mini"), PendingRecord("batch-2", "r3", {}))
    assert (pending_reason(store) or "").startswith("pending: 3 requests in 2 batches;")
    store.remove(key, "r1")
    assert [r.response_id for r in store.waiting(key)] == ["r2"]
    store.remove(key, "r2")
    assert len(list((tmp_path / "batches").glob("*.json"))) == 1


def test_a_wait_that_runs_out_ends_at_once_as_pending_and_the_next_run_collects(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    (project.path / "benchmarks" / "B1.yaml").write_text(benchmark(2))
    fake.polls = 10**6  # the batch never ends while the first run waits
    waited, data = run(project, fake, "waited", "--llmjudge-batch=on", "--llmjudge-batch-wait=4s")
    out = waited.stdout.str()
    assert waited.ret != 0 and fake.created_batches == 1, out
    pending = "pending: 2 requests in 1 batch; collect with pytest --llmjudge-batch=collect"
    assert pending in out
    assert any(r.startswith(pending) for r in data["exit_reasons"]), data["exit_reasons"]
    # the wait ran out once: no retry waits again (3 attempts by default), the batch is not cancelled
    assert "0 retries" in out, out
    reasons = [c["reason"] for b in data["benchmarks"] for c in b["cases"]]
    assert all(
        r.startswith("batch-pending: batch batch-2 still running after --llmjudge-batch-wait=4s")
        for r in reasons
    ), reasons
    batch_calls = [r.at for r in fake.requests if r.path.startswith("/v1/batches")]
    assert max(batch_calls) - min(batch_calls) < 2 * 4  # checked for one wait, not one per attempt
    assert all(b["status"] != "cancelled" for b in fake.batches.values())

    fake.polls = 0
    collected, data = run(project, fake, "collected", "--llmjudge-batch=on")
    assert fake.created_batches == 1 and fake.live == 0, collected.stdout.str()
    assert sorted(verdicts(data).values()) == ["fail", "pass"]
    assert not any(r.startswith("pending:") for r in data["exit_reasons"])


def test_a_judge_batch_true_benchmark_left_pending_fails_the_run_and_says_how_to_collect(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    text = benchmark(3).replace("threshold: 0.5\n", "threshold: 0.5\njudge: {batch: true}\n")
    (project.path / "benchmarks" / "B1.yaml").write_text(text)
    (project.path / "benchmarks" / "B2.yaml").write_text(benchmark(2).replace("B1", "B2"))
    fake.polls = 10**6
    result, data = run(project, fake, "mixed", "--llmjudge-batch-wait=3s", "--junitxml=junit.xml")
    out = result.stdout.str()
    assert result.ret == 1 and fake.live == 2, out
    pending = "pending: 3 requests in 1 batch; collect with"
    assert pending in out, out
    assert any(r.startswith(pending) for r in data["exit_reasons"]), data["exit_reasons"]
    junit = (project.path / "junit.xml").read_text()
    assert '<property name="llmjudge_exit_status" value="1"' in junit and pending in junit, junit


def test_a_benchmark_with_judge_batch_true_is_batched_in_a_live_run(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    text = benchmark(3).replace("threshold: 0.5\n", "threshold: 0.5\njudge: {batch: true}\n")
    (project.path / "benchmarks" / "B1.yaml").write_text(text)
    (project.path / "benchmarks" / "B2.yaml").write_text(benchmark(2).replace("B1", "B2"))
    result, data = run(project, fake, "mixed")
    assert fake.batched == 3 and fake.live == 2, result.stdout.str()
    assert data["totals"]["cases"] == 5 and data["totals"]["errors"] == 0


def pairwise_rule(text: str) -> dict[str, Any]:
    """A pairwise request's answer: the output that says BETTER wins; single requests as usual."""
    if "<OutputA>" not in text:
        return default_rule(text)
    a, b = (re.findall(rf"<Output{s}>(.*?)</Output{s}>", text, re.S)[-1:] for s in "AB")
    a_better, b_better = ("BETTER" in "".join(found) for found in (a, b))
    winner = "tie" if a_better == b_better else "A" if a_better else "B"
    return {"winner": winner, "reason": f"{winner} is preferred"}


def test_submit_and_collect_cover_reasoning_styles_and_pairwise_calls(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    benchmarks = project.path / "benchmarks"
    (benchmarks / "B1.yaml").write_text(
        benchmark(3).replace("threshold: 0.5\n", "threshold: 0.5\njudge: {prompt_style: short_cot}\n")
    )
    pairs = "".join(
        f"  - {{id: p{i}, candidate_output: {c} {i}, baseline_output: {b} {i}}}\n"
        for i, (c, b) in enumerate([("BETTER", "plain"), ("plain", "BETTER")])
    )
    (benchmarks / "P1.yaml").write_text(
        "code: P1\nconcept: The output is good.\ninclusion_criteria: Apply always. Flag a bad output.\n"
        "threshold: 0.5\njudge: {mode: pairwise}\ncases:\n" + pairs
    )
    fake.rule = pairwise_rule
    submitted, _ = run(project, fake, "submitted", "--llmjudge-batch=submit")
    out = submitted.stdout.str()
    assert submitted.ret != 0 and fake.live == 0 and fake.batched == 0, out
    # 3 chain-of-thought cases and 2 pairwise cases in both orders: every call recorded, none waited for
    assert "pending: 7 requests in " in out, out
    assert len(list((benchmarks.parent / ".llmjudge" / "batches").glob("*.json"))) == 7
    created = fake.created_batches

    collected, data = run(project, fake, "collected", "--llmjudge-batch=collect")
    out = collected.stdout.str()
    assert fake.created_batches == created and fake.live == 0, out  # nothing submitted again
    assert fake.batched == 7, out
    assert verdicts(data) == {"c0": "fail", "c1": "pass", "c2": "pass", "p0": "pass", "p1": "fail"}, out
    outcomes = {
        c["id"]: c["pairwise"]["outcome"] for b in data["benchmarks"] for c in b["cases"] if c.get("pairwise")
    }
    assert outcomes == {"p0": "win", "p1": "loss"}, out
    assert list((benchmarks.parent / ".llmjudge" / "batches").glob("*.json")) == [], out


def model_task_benchmark(project: pytest.Pytester, fake: FakeBatchServer) -> None:
    """B1 with a model task at the fake server: the task answers "marked to fail" for a case whose
    text holds FAIL-ME, and the judge fails such an answer."""
    fake.rule = lambda text: default_rule(text.replace("marked to fail", "FAIL-ME"))
    (project.path / "prompts").mkdir()
    (project.path / "prompts" / "ask.yaml").write_text(
        'messages:\n  - role: user\n    content: "Answer: {{ source_narrative }}"\n'
        "template_variables: [source_narrative]\n"
    )
    cases = "".join(
        f"  - {{id: t{i}, source_narrative: case {i}{' FAIL-ME' if i == 0 else ''}}}\n" for i in range(3)
    )
    (project.path / "benchmarks" / "B1.yaml").write_text(
        "code: B1\nconcept: The output is right.\ninclusion_criteria: Apply when there is output.\n"
        f"threshold: 0.5\ntask:\n  model: openai:{MODEL}\n  base_url: {fake.url}/v1\n"
        "  prompt_file: prompts/ask.yaml\ncases:\n" + cases
    )


def produced(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["id"]: case["produced"] for b in data["benchmarks"] for case in b["cases"]}


def test_model_task_calls_go_through_the_batch_too_at_the_batch_rate(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    model_task_benchmark(project, fake)
    off = ("--llmjudge-cache=off", "--llmjudge-task-cache=off")
    live, live_data = run(project, fake, "live", *off)
    assert fake.live == 6 and fake.created_batches == 0, live.stdout.str()  # 3 tasks, 3 judge calls
    fake.live = 0

    # a batched task call waits in its batch, not for a task slot: the 3 share one batch all the same
    batched, data = run(project, fake, "batched", "--llmjudge-batch=on", "--llmjudge-task-concurrency=1")
    out = batched.stdout.str()
    assert fake.live == 0 and fake.batched == 6, out  # the task calls in a batch, then the judge calls
    assert fake.created_batches == 2, out
    assert verdicts(data) == verdicts(live_data) == {"t0": "fail", "t1": "pass", "t2": "pass"}, out
    outputs, live_outputs = produced(data), produced(live_data)
    for case, output in outputs.items():
        assert output["source"] == "task" and output["output"] == live_outputs[case]["output"], out
        assert Decimal(str(output["cost_usd"])) * 2 == Decimal(str(live_outputs[case]["cost_usd"])) > 0
    assert "model tasks ran live" not in out

    batches = fake.created_batches
    rerun, rerun_data = run(project, fake, "rerun", "--llmjudge-batch=on")
    out = rerun.stdout.str()
    assert fake.live == 0 and fake.batched == 6 and fake.created_batches == batches, out  # no call at all
    assert verdicts(rerun_data) == verdicts(live_data), out
    assert {p["source"] for p in produced(rerun_data).values()} == {"task cache"}, out


def test_submit_leaves_model_task_requests_pending_and_collect_judges_their_outputs(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    model_task_benchmark(project, fake)
    submitted, data = run(project, fake, "submitted", "--llmjudge-batch=submit")
    out = submitted.stdout.str()
    assert submitted.ret != 0 and fake.live == 0 and fake.batched == 0 and fake.created_batches == 1, out
    assert "pending: 3 requests in 1 batch; collect with pytest --llmjudge-batch=collect" in out, out
    reasons = [case["reason"] for b in data["benchmarks"] for case in b["cases"]]
    assert len(reasons) == 3 and all(r.startswith("batch-pending: ") for r in reasons), reasons
    assert all("submitted in batch" in r for r in reasons), reasons
    assert len(list((project.path / ".llmjudge" / "batches").glob("*.json"))) == 3

    collected, data = run(project, fake, "collected", "--llmjudge-batch=collect")
    out = collected.stdout.str()
    # the task requests collected from their batch, not submitted again; the judge calls in a new one
    assert fake.created_batches == 2 and fake.batched == 6 and fake.live == 0, out
    assert verdicts(data) == {"t0": "fail", "t1": "pass", "t2": "pass"}, out
    assert {p["source"] for p in produced(data).values()} == {"task"}, out
    assert list((project.path / ".llmjudge" / "batches").glob("*.json")) == [], out


def test_merged_shards_add_up_their_pending_requests() -> None:
    from types import SimpleNamespace

    from pytest_llmjudge.reporting.results_merge import pending_of

    def shard(*reasons: str) -> Any:
        return SimpleNamespace(results=SimpleNamespace(exit_reasons=list(reasons)))

    hint = "collect with pytest --llmjudge-batch=collect (the same suite and judge)"
    shards = [
        shard("gate failed: B1", f"pending: 3 requests in 1 batch; {hint}"),
        shard(),
        shard(f"pending: 1 request in 2 batches; {hint}"),
    ]
    assert pending_of(shards) == f"pending: 4 requests in 3 batches; {hint} (in each shard's job)"
    assert pending_of([shard("gate failed: B1")]) is None


def test_submit_and_collect_cover_each_member_of_a_panel(
    project: pytest.Pytester, fake: FakeBatchServer
) -> None:
    panel = "judge: {panel: [gpt-4o-mini, gpt-4o]}\n"
    (project.path / "benchmarks" / "B1.yaml").write_text(
        benchmark(3).replace("threshold: 0.5\n", f"threshold: 0.5\n{panel}")
    )
    submitted, _ = run(project, fake, "submitted", "--llmjudge-batch=submit")
    out = submitted.stdout.str()
    assert submitted.ret != 0 and fake.live == 0 and fake.batched == 0, out
    assert "pending: 6 requests in " in out, out  # 3 cases, each asked of both members
    created = fake.created_batches

    collected, data = run(project, fake, "collected", "--llmjudge-batch=collect")
    out = collected.stdout.str()
    assert fake.created_batches == created and fake.live == 0 and fake.batched == 6, out
    assert verdicts(data) == {"c0": "fail", "c1": "pass", "c2": "pass"}, out
