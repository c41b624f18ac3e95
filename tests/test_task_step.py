"""The task step, run by pytest: a benchmark's cases get their outputs from a task, which are
cached and judged, and a broken task is an ERROR of its case, never a FAIL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Suite
from task_suites import APP, EXTRACT_PROMPT, results, task_calls, write_model_suite, write_task_suite


def test_outputs_come_from_the_task_and_a_rerun_calls_neither_task_nor_judge(suite: Suite) -> None:
    write_task_suite(suite)
    first = suite.run("benchmarks", "--llmjudge-results=r.json")
    first.assert_outcomes(passed=4)  # the prompt item and three cases
    assert sorted(task_calls(suite)) == ["c0", "c1", "c2"]
    assert len(suite.judge_calls()) == 3
    assert any("alpha" in line for line in suite.judge_calls())  # the judge saw the produced output
    cases = {c["id"]: c for c in results(suite)["benchmarks"][0]["cases"]}
    produced = cases["c0"]["produced"]
    assert produced["source"] == "task" and produced["output"] == {"echo": "alpha", "saw_truth": None}
    assert produced["task"] == "app.produce:run@1" and produced["latency"] >= 0
    again = suite.run("benchmarks", "--llmjudge-results=r.json")
    again.assert_outcomes(passed=4)
    assert len(task_calls(suite)) == 3 and len(suite.judge_calls()) == 3  # no new call
    assert results(suite)["benchmarks"][0]["cases"][0]["produced"]["source"] == "task cache"


def test_a_bumped_task_version_regenerates_and_rejudges_only_changed_outputs(suite: Suite) -> None:
    write_task_suite(suite)
    suite.run("benchmarks").assert_outcomes(passed=4)
    write_task_suite(suite, version="2")  # same outputs from a new version
    suite.run("benchmarks").assert_outcomes(passed=4)
    assert len(task_calls(suite)) == 6 and len(suite.judge_calls()) == 3  # regenerated, not rejudged
    write_task_suite(suite, version="3", suffix=" FAIL")  # a version whose outputs changed
    suite.run("benchmarks").assert_outcomes(passed=1, failed=3)
    assert len(task_calls(suite)) == 9 and len(suite.judge_calls()) == 6


def test_a_task_that_raises_errors_its_case_and_the_others_are_judged(suite: Suite) -> None:
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text().replace("source_narrative: beta", "source_narrative: boom"))
    result = suite.run("benchmarks", "-rE")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ["*task ERROR (task-error)*app.produce:run@1 raised ValueError: the product broke*"]
    )
    assert len(suite.judge_calls()) == 2


def test_ground_truth_is_withheld_unless_the_task_asks_for_it(suite: Suite) -> None:
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    text = path.read_text().replace(
        "{id: c0, source_narrative: alpha}", "{id: c0, source_narrative: alpha, ground_truth: A}"
    )
    path.write_text(text)
    suite.run("benchmarks", "--llmjudge-results=r.json", "-k", "c0")
    assert results(suite)["benchmarks"][0]["cases"][0]["produced"]["output"]["saw_truth"] is None
    path.write_text(text + "task_sees_ground_truth: true\n")
    suite.run("benchmarks", "--llmjudge-results=r.json", "-k", "c0")
    assert results(suite)["benchmarks"][0]["cases"][0]["produced"]["output"]["saw_truth"] == "A"


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ("app.missing:run", "*T1.yaml:5:*task: cannot import 'app.missing'*"),
        ("app.produce:nothing", "*T1.yaml:5:*task: module 'app.produce' has no attribute 'nothing'*"),
        ("app.produce:SUFFIX", "*T1.yaml:5:*task: app.produce:SUFFIX is a str, not callable*"),
    ],
)
def test_a_task_that_cannot_be_used_is_a_collection_error_at_its_line(
    suite: Suite, task: str, message: str
) -> None:
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text().replace("app.produce:run", task))
    result = suite.run("benchmarks")
    assert result.ret == pytest.ExitCode.INTERRUPTED or result.ret == 1
    result.stdout.fnmatch_lines([message])


def test_a_benchmark_with_neither_outputs_nor_a_task_says_so_at_the_case_line(suite: Suite) -> None:
    suite.benchmark(
        "T2",
        """\
        code: T2
        concept: c
        inclusion_criteria: Apply when there is output. Flag if it is wrong.
        cases:
          - {id: c0, source_narrative: alpha}
        """,
    )
    result = suite.run("benchmarks")
    result.stdout.fnmatch_lines(["*T2.yaml:5:*task: case c0 has no candidate_output and T2 has no task*"])


def test_the_run_wide_task_serves_benchmarks_without_their_own(suite: Suite) -> None:
    write_task_suite(suite)
    path: Path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text().replace("task: app.produce:run\n", ""))
    suite.run("benchmarks", "--llmjudge-task=app.produce:run").assert_outcomes(passed=4)
    assert sorted(task_calls(suite)) == ["c0", "c1", "c2"]


# -- a model task against a loopback OpenAI-compatible server ---------------------------------


def test_a_model_task_sends_the_rendered_template_with_few_shot_examples(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_openai import serve

    with serve(verdict={"answer": "heparin"}) as fake:
        write_model_suite(suite, fake.url, monkeypatch)
        result = suite.run("benchmarks", "--llmjudge-results=r.json", "-k", "asked")
        result.assert_outcomes(passed=1)
        assert len(fake.completions) == 1
        messages = fake.completions[0].body["messages"]
        texts = [(m["role"], m["content"]) for m in messages]
        assert texts[0] == ("system", "You extract medications.")
        assert ("user", "Narrative: Pt given aspirin") in texts  # the few-shot example ...
        assert ("assistant", '{"answer":"aspirin"}') in texts  # ... with its ground truth answer
        assert texts[-1] == ("user", "Narrative: Pt given heparin")
        assert fake.completions[0].body["model"] == "release-1"
        produced = results(suite)["benchmarks"][0]["cases"][0]["produced"]
        assert produced["output"] == {"answer": "heparin"} and produced["source"] == "task"
        assert produced["input_tokens"] == 3 and produced["output_tokens"] == 2
        # another task model is another fingerprint: the output is produced again
        suite.run(
            "benchmarks",
            "-k",
            "asked",
            "--llmjudge-task-model=openai:candidate-2",
            f"--llmjudge-task-base-url={fake.url}/v1",
        ).assert_outcomes(passed=1)
        assert [c.body["model"] for c in fake.completions] == ["release-1", "candidate-2"]
        suite.run("benchmarks", "-k", "asked").assert_outcomes(passed=1)
        assert len(fake.completions) == 2  # the release's output is still cached


def test_a_template_variable_the_case_lacks_errors_that_case_naming_what_it_has(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_openai import serve

    with serve(verdict={"answer": "x"}) as fake:
        write_model_suite(suite, fake.url, monkeypatch)
        suite.write("prompts/extract.yaml", EXTRACT_PROMPT.replace("source_narrative }}", "narrative }}"))
        result = suite.run("benchmarks", "-k", "asked", "-rE")
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(["*task ERROR (task-request)*'narrative'*source_narrative*"])
        assert fake.completions == []


def test_task_cache_replay_never_runs_the_task(suite: Suite) -> None:
    write_task_suite(suite)
    result = suite.run("benchmarks", "--llmjudge-task-cache=replay", "-rE")
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.fnmatch_lines(["*task ERROR (task-cache-miss)*never runs a task*"])
    assert task_calls(suite) == []
    suite.run("benchmarks").assert_outcomes(passed=4)
    suite.run("benchmarks", "--llmjudge-task-cache=replay").assert_outcomes(passed=4)
    assert len(task_calls(suite)) == 3


def test_regenerate_runs_the_task_for_cases_with_stored_outputs(suite: Suite) -> None:
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(
        path.read_text().replace(
            "source_narrative: alpha}", "source_narrative: alpha, candidate_output: FAIL}"
        )
    )
    suite.run("benchmarks").assert_outcomes(passed=3, failed=1)  # the stored output is judged
    assert sorted(task_calls(suite)) == ["c1", "c2"]
    suite.run("benchmarks", "--llmjudge-regenerate").assert_outcomes(passed=4)
    assert sorted(task_calls(suite)) == ["c0", "c1", "c2"]


def test_a_frozen_run_is_judged_again_with_no_task_call(suite: Suite) -> None:
    import subprocess
    import sys

    write_task_suite(suite)
    suite.run("benchmarks", "--llmjudge-results=r.json").assert_outcomes(passed=4)
    command = [sys.executable, "-m", "pytest_llmjudge.cli.main", "freeze", "r.json", "--out", "frozen"]
    frozen = subprocess.run(command, cwd=suite.root, capture_output=True, text=True, check=False)
    assert frozen.returncode == 0, frozen.stderr
    lines = [json.loads(line) for line in (suite.root / "frozen/T1.jsonl").read_text().splitlines()]
    assert [(c["id"], c["candidate_output"]["echo"]) for c in lines] == [
        ("c0", "alpha"),
        ("c1", "beta"),
        ("c2", "gamma"),
    ]
    again = subprocess.run(command, cwd=suite.root, capture_output=True, text=True, check=False)
    assert again.returncode == 2 and "exists; pass --force" in again.stderr
    path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text().split("cases:")[0] + "cases_file: frozen/T1.jsonl\n")
    (suite.root / ".llmjudge/cache.sqlite").unlink()  # nothing cached: the outputs are the file's
    suite.run("benchmarks").assert_outcomes(passed=4)
    assert len(task_calls(suite)) == 3  # the first run's only


def test_the_prompt_snapshot_and_compile_show_what_a_model_task_sends(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    write_model_suite(suite, "http://127.0.0.1:9", monkeypatch)  # never called: nothing is judged
    result = suite.run("benchmarks", "-k", "prompt", "--snapshot-update", syrupy=True)
    result.assert_outcomes(passed=1)
    snapshot = (suite.root / "benchmarks/a/__snapshots__/M1.ambr").read_text()
    assert "task request asked" in snapshot
    assert "Narrative: Pt given aspirin" in snapshot and "Narrative: Pt given heparin" in snapshot
    command = [sys.executable, "-m", "pytest_llmjudge.cli.main", "compile", "benchmarks/a/M1.yaml"]
    compiled = subprocess.run(command, cwd=suite.root, capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stderr
    assert "M1::asked  task request" in compiled.stdout
    assert '[assistant]\n{"answer":"aspirin"}' in compiled.stdout  # the few-shot example


def test_lint_checks_the_variables_of_a_task_prompt_template(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_model_suite(suite, "http://127.0.0.1:9", monkeypatch)
    suite.write(
        "prompts/extract.yaml", EXTRACT_PROMPT.replace("[source_narrative]", "[source_narrative, unused]")
    )
    import subprocess
    import sys

    command = [sys.executable, "-m", "pytest_llmjudge.cli.main", "lint", "benchmarks"]
    linted = subprocess.run(command, cwd=suite.root, capture_output=True, text=True, check=False)
    assert "prompts/extract.yaml:" in linted.stdout and "LJ041" in linted.stdout, linted.stdout
    assert "'unused'" in linted.stdout


def test_under_xdist_each_case_runs_its_task_once_and_a_rerun_none(suite: Suite) -> None:
    write_task_suite(suite)
    suite.run("benchmarks", "-n", "2").assert_outcomes(passed=4)
    assert sorted(task_calls(suite)) == ["c0", "c1", "c2"]
    suite.run("benchmarks", "-n", "2").assert_outcomes(passed=4)
    assert len(task_calls(suite)) == 3 and len(suite.judge_calls()) == 3


def test_a_task_that_takes_too_long_is_an_error_naming_the_timeout(suite: Suite) -> None:
    write_task_suite(suite)
    slow = "\nimport time\n_run = run\n\ndef run(case):\n    time.sleep(5 if case.id == 'c1' else 0)\n"
    suite.write("app/produce.py", APP.format(suffix="") + slow + "    return _run(case)\n")
    result = suite.run("benchmarks", "--llmjudge-task-timeout=0.5", "-rE")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*task ERROR (task-timeout)*took longer than --llmjudge-task-timeout=0.5s*"])


def test_the_html_report_shows_each_output_and_where_it_came_from(suite: Suite) -> None:
    write_task_suite(suite)
    suite.run("benchmarks", "--llmjudge-html=r.html").assert_outcomes(passed=4)
    page = (suite.root / "r.html").read_text()
    assert '"produced":{"source":"task · app.produce:run@1 · ' in page
    assert '\\"echo\\": \\"alpha\\"' in page  # the output itself
    assert "Output judged (" in page  # the case detail's heading (drawn by the page's script)


def test_outputs_kept_with_the_verdict_cache_off_are_replayed_and_estimated(suite: Suite) -> None:
    """The cache file then holds produced outputs and no verdict: the estimate and a replay read
    it as an empty verdict cache instead of refusing it as damaged."""
    write_task_suite(suite)
    assert suite.run("benchmarks", "--llmjudge-cache=off").ret == 0
    estimate = suite.run("benchmarks", "--llmjudge-estimate")
    assert "not a usable verdict cache" not in estimate.stdout.str() + estimate.stderr.str()
    assert estimate.ret == 0, estimate.stdout.str()
    replay = suite.run("benchmarks", "--llmjudge-cache=replay")
    assert "not a usable verdict cache" not in replay.stdout.str() + replay.stderr.str()
    replay.stdout.fnmatch_lines(["task: 0 output(s) produced, 3 from the output cache, 0 error(s)"])
    assert sorted(task_calls(suite)) == ["c0", "c1", "c2"]  # the first run only (tasks run concurrently)
