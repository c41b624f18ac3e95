"""The task step against hostile or careless tasks, run by pytest: whatever a task raises is its
case's ERROR and the run goes on, a hung task never keeps the process alive, a task cannot change
what the judge is told, and the task options and replay do what they say."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import JUDGE_CONFTEST, Suite
from interrupts import ctrl_c_restored
from task_suites import model_task_benchmark, serve_model_tasks

# Each case raises what its id names, from a sync task and from an async one.
RAISING = """\
import argparse
import asyncio


def _raise(case):
    if case.id == "system-exit":
        argparse.ArgumentParser(prog="app").parse_args(["--bogus"])
    if case.id == "keyboard-interrupt":
        raise KeyboardInterrupt
    if case.id == "generator-exit":
        raise GeneratorExit("closed")
    if case.id == "cancelled":
        raise asyncio.CancelledError("gave up")
    return "fine"


def run_sync(case):
    return _raise(case)


async def run_async(case):
    await asyncio.sleep(0)
    return _raise(case)
"""

CASES = ("system-exit", "keyboard-interrupt", "generator-exit", "cancelled", "ok")


def benchmark(code: str, task: str, cases: tuple[str, ...] = ("c0",), extra: str = "") -> str:
    lines = "".join(f"  - {{id: {case}, source_narrative: n}}\n" for case in cases)
    return (
        f"code: {code}\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        f"threshold: 0.5\ntask: {task}\n{extra}cases:\n{lines}"
    )


def write_app(suite: Suite, source: str) -> None:
    suite.write("app/__init__.py", "")
    suite.write("app/produce.py", source)


def test_whatever_a_task_raises_is_its_case_error_and_the_run_goes_on(suite: Suite) -> None:
    write_app(suite, RAISING)
    suite.benchmark("S1", benchmark("S1", "app.produce:run_sync", CASES))
    suite.benchmark("A1", benchmark("A1", "app.produce:run_async", CASES))
    result = suite.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", "-rE", timeout=120
    )
    result.assert_outcomes(passed=4, errors=8)  # two prompt items and two "ok" cases
    for task in ("app.produce:run_sync", "app.produce:run_async"):
        result.stdout.fnmatch_lines(
            [
                f"*task ERROR (task-error)*task {task} raised SystemExit: 2*",
                f"*task ERROR (task-error)*task {task} raised KeyboardInterrupt*",
                f"*task ERROR (task-error)*task {task} raised GeneratorExit: closed*",
                f"*task ERROR (task-error)*task {task} raised CancelledError: gave up*",
            ],
            consecutive=False,
        )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert result.ret == 1


HANGING = """\
import time
from pathlib import Path


def run(case):
    if case.id == "hangs":
        (Path(__file__).parent.parent / "started").write_text("yes")
        time.sleep(3600)
    return "fine"
"""


def test_a_timed_out_sync_task_does_not_keep_the_process_alive(suite: Suite) -> None:
    write_app(suite, HANGING)
    suite.benchmark("H1", benchmark("H1", "app.produce:run", ("hangs", "ok")))
    started = time.monotonic()
    result = suite.pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "benchmarks",
        "-rE",
        "--llmjudge-task-timeout=1",
        timeout=60,
    )
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*task ERROR (task-timeout)*took longer than --llmjudge-task-timeout=1s*"])
    assert time.monotonic() - started < 30


def test_a_real_ctrl_c_still_stops_the_run(suite: Suite) -> None:
    write_app(suite, HANGING)
    suite.benchmark("H1", benchmark("H1", "app.produce:run", ("hangs", "ok")))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks"]
    child = subprocess.Popen(
        command,
        cwd=suite.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=ctrl_c_restored,
    )
    try:
        deadline = time.monotonic() + 60
        while not (suite.root / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (suite.root / "started").exists(), "the task never started"
        child.send_signal(signal.SIGINT)
        output, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output


MUTATING = """\
def run(case):
    case.ground_truth.clear()
    case.inputs["question"] = "tampered"
    case.inputs["tags"].append("tampered")
    case.metadata["source"] = "tampered"
    return "Paris"
"""

PROMPT_LOG = """\
    with (Path(__file__).parent / "prompts.log").open("a") as seen:
        seen.write(prompt + "\\n")
"""


def test_a_task_that_mutates_its_case_does_not_change_what_the_judge_is_told(suite: Suite) -> None:
    conftest = JUDGE_CONFTEST.replace("    with CALLS.open", PROMPT_LOG + "    with CALLS.open", 1)
    suite.pytester.makeconftest(conftest)
    write_app(suite, MUTATING)
    suite.benchmark(
        "M1",
        """\
        code: M1
        concept: The output names the capital.
        inclusion_criteria: Apply when there is output. Flag if it is wrong.
        threshold: 0.5
        task: app.produce:run
        task_sees_ground_truth: true
        cases:
          - id: c0
            inputs: {question: capital of France?, tags: [geography]}
            ground_truth: {answer: Paris-expected}
            metadata: {source: atlas}
        """,
    )
    suite.run("benchmarks").assert_outcomes(passed=2)
    prompt = (suite.root / "prompts.log").read_text()
    assert "Paris-expected" in prompt and "capital of France?" in prompt and "geography" in prompt
    assert "tampered" not in prompt


def test_a_case_without_output_or_task_is_reported_at_its_own_line(suite: Suite) -> None:
    suite.benchmark(
        "B2",
        """\
        code: B2
        concept: c
        inclusion_criteria: Apply when there is output. Flag if it is wrong.
        cases:
          - {id: stored, source_narrative: alpha, candidate_output: fine}
          - {id: missing, source_narrative: beta}
        """,
    )
    result = suite.run("benchmarks")
    result.stdout.fnmatch_lines(
        ["*B2.yaml:6:*task: case missing has no candidate_output and B2 has no task*"]
    )
    assert "B2.yaml:1:" not in result.stdout.str()


# -- model tasks against the loopback fake server ---------------------------------------------

PROMPT = """\
messages:
  - role: user
    content: "Narrative: {{ source_narrative }}"
template_variables: [source_narrative]
"""


def write_model_suite(suite: Suite, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Benchmark M2: one case whose model task calls the server at ``url``."""
    serve_model_tasks(suite, monkeypatch)
    suite.write("prompts/ask.yaml", PROMPT)
    case = '  - {id: c0, source_narrative: "Pt given heparin"}\n'
    suite.benchmark("M2", model_task_benchmark("M2", url, "prompts/ask.yaml", case))


def test_cache_replay_calls_no_task_model_and_creates_no_cache_file(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_openai import serve

    with serve(verdict="heparin") as fake:
        write_model_suite(suite, fake.url, monkeypatch)
        result = suite.run("benchmarks", "--llmjudge-cache=replay", "-rE")
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.fnmatch_lines(
            ["*task ERROR (task-cache-miss)*--llmjudge-cache=replay never runs a task*"]
        )
        assert fake.completions == []
        assert not (suite.root / ".llmjudge/cache.sqlite").exists()
        # asked for explicitly, the task runs (and its output is cached) under a verdict replay
        suite.run("benchmarks", "--llmjudge-cache=replay", "--llmjudge-task-cache=on")
        assert len(fake.completions) == 1


def test_task_base_url_alone_sends_every_model_task_there_with_its_own_model(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_openai import serve

    with serve(verdict="heparin") as fake:
        write_model_suite(suite, "http://127.0.0.1:9", monkeypatch)  # nothing listens there
        result = suite.run("benchmarks", f"--llmjudge-task-base-url={fake.url}/v1")
        result.assert_outcomes(passed=2)
        assert [c.body["model"] for c in fake.completions] == ["release-1"]


# -- task errors, in full -----------------------------------------------------------------------

CAPITALS = """\
import os

CAPITALS = {"germany": "Berlin"}


def lookup(country):
    return CAPITALS[country]


def run(case):
    if case.id == "big":
        return "x" * 5000
    if case.id == "leaky":
        return {"answer": "Berlin", "debug": "key=" + os.environ["OPENAI_API_KEY"]}
    return lookup(case.inputs["country"])
"""


def capitals_benchmark() -> str:
    return (
        "code: C1\nconcept: The output names the capital.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        "threshold: 0.5\ntask: app.produce:run\ncases:\n"
        "  - {id: de, inputs: {country: germany}}\n"
        "  - {id: fr, inputs: {country: france}}\n"
    )


def test_a_task_error_shows_the_last_frames_of_the_users_code(suite: Suite) -> None:
    write_app(suite, CAPITALS)
    suite.benchmark("C1", capitals_benchmark())
    result = suite.run("benchmarks")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*task app.produce:run raised KeyError: 'france'",
            '  app/produce.py:15 in run: return lookup(case.inputs[[]"country"[]])',
            "  app/produce.py:7 in lookup: return CAPITALS[[]country[]]",
        ]
    )
    assert "task_step.py" not in result.stdout.str() and "threading.py" not in result.stdout.str()


def test_task_errors_are_counted_apart_from_judge_errors(suite: Suite) -> None:
    write_app(suite, CAPITALS)
    suite.benchmark("C1", capitals_benchmark())
    result = suite.run("benchmarks")
    result.stdout.fnmatch_lines(
        [
            "judge: 1 verdict(s), 1 model call(s), 0 cache hit(s), 0 retries, 0 error(s)*",
            "task: 1 output(s) produced, 1 error(s) (1 task-error)",
        ]
    )
    result.stdout.fnmatch_lines(["exit status 1: 1 failing or erroring item(s): 1 task error"])


def test_no_local_judge_server_starts_when_no_case_needs_judging(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pydantic_ai.models
    from fake_openai import serve

    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    monkeypatch.delenv("LLMJUDGE_LOCAL_SERVER_URL", raising=False)
    suite.pytester.makeconftest("")  # no judge hook: the local server is the judge
    write_app(suite, CAPITALS)
    suite.benchmark("C1", capitals_benchmark().replace("  - {id: de, inputs: {country: germany}}\n", ""))
    with serve() as fake:
        result = suite.run("benchmarks", f"--llmjudge-model=local:{fake.url}")
        result.assert_outcomes(passed=1, errors=1)
        assert fake.requests == []


def test_a_task_output_larger_than_the_response_cap_is_an_error(suite: Suite) -> None:
    write_app(suite, CAPITALS)
    suite.benchmark("C1", benchmark("C1", "app.produce:run", ("big",)))
    result = suite.run("benchmarks", "--llmjudge-max-response-bytes=1000", "--llmjudge-results=r.json", "-rE")
    result.assert_outcomes(passed=1, errors=1)
    capped = "more than --llmjudge-max-response-bytes=1000"
    result.stdout.fnmatch_lines([f"*task ERROR (task-output)*returned 5,000 bytes of output, {capped}*"])
    assert (suite.root / "r.json").stat().st_size < 20_000
    assert suite.judge_calls() == []


def test_secrets_in_a_task_output_are_redacted(suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    write_app(suite, CAPITALS)
    suite.benchmark("C1", benchmark("C1", "app.produce:run", ("leaky",)))
    suite.run("benchmarks", "--llmjudge-results=r.json").assert_outcomes(passed=2)
    results = (suite.root / "r.json").read_text()
    assert secret not in results and secret not in "".join(suite.judge_calls())
    case = json.loads(results)["benchmarks"][0]["cases"][0]
    assert case["produced"]["output"] == {"answer": "Berlin", "debug": "key=[redacted]"}
    assert not any(secret in p.read_text(errors="replace") for p in _files(suite.root / ".llmjudge"))


def _files(folder: Path) -> list[Path]:
    return [Path(root, name) for root, _, names in os.walk(folder) for name in names]
