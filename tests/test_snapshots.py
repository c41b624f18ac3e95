"""Snapshots of compiled judge requests are never lost by a run that did not check them."""

from __future__ import annotations

from tests.conftest import GOOD, Suite

OTHER = GOOD.replace("A-OK1", "A-OK2")


def accepted(suite: Suite) -> Suite:
    suite.benchmark("A-OK1", GOOD)
    suite.benchmark("A-OK2", OTHER)
    result = suite.run("benchmarks", "--snapshot-update", syrupy=True)
    result.stdout.fnmatch_lines(["2 snapshots generated."])
    return suite


def snapshot_files(suite: Suite) -> list[str]:
    return sorted(p.name for p in (suite.root / "benchmarks/a/__snapshots__").glob("*.ambr"))


def test_run_without_a_model_reports_and_deletes_no_snapshot(bare_suite: Suite) -> None:
    accepted_suite = bare_suite
    accepted_suite.benchmark("A-OK1", GOOD)
    accepted_suite.benchmark("A-OK2", OTHER)
    # accept with a judge-free selection: prompt items only
    accepted_suite.run("benchmarks", "-k", "prompt", "--snapshot-update", syrupy=True)
    assert snapshot_files(accepted_suite) == ["A-OK1.ambr", "A-OK2.ambr"]
    result = accepted_suite.run("benchmarks", syrupy=True)
    assert result.ret == 4
    assert "unused" not in result.stdout.str()
    result = accepted_suite.run("benchmarks", "--snapshot-update", syrupy=True)
    assert result.ret == 4
    assert "deleted" not in result.stdout.str()
    assert snapshot_files(accepted_suite) == ["A-OK1.ambr", "A-OK2.ambr"]


def test_items_that_did_not_run_keep_their_snapshots(suite: Suite) -> None:
    accepted(suite)
    suite.benchmark("A-OK1", GOOD.replace("candidate_output: hello", "candidate_output: FAIL"))
    result = suite.run("benchmarks", "-x", "--snapshot-update", syrupy=True)
    assert "deleted" not in result.stdout.str()
    assert snapshot_files(suite) == ["A-OK1.ambr", "A-OK2.ambr"]


def test_broken_benchmark_file_keeps_its_snapshot(suite: Suite) -> None:
    accepted(suite)
    suite.benchmark("A-OK2", OTHER.replace("label: Always fine", "label: [unclosed"))
    result = suite.run("benchmarks", syrupy=True)
    assert "unused" not in result.stdout.str()
    result = suite.run("benchmarks", "--snapshot-update", syrupy=True)
    assert "deleted" not in result.stdout.str()
    assert snapshot_files(suite) == ["A-OK1.ambr", "A-OK2.ambr"]


def test_new_candidate_outputs_do_not_fail_the_prompt_snapshot(suite: Suite) -> None:
    accepted(suite)
    suite.benchmark("A-OK1", GOOD.replace("candidate_output: hello", "candidate_output: hello there"))
    result = suite.run("benchmarks", "-k", "prompt", syrupy=True)
    result.stdout.fnmatch_lines(["2 snapshots passed."])
    assert result.ret == 0
    suite.benchmark("A-OK1", GOOD.replace("The output says hello.", "The output says goodbye."))
    result = suite.run("benchmarks", "-k", "prompt", syrupy=True)
    assert "compiled judge requests of A-OK1 differ from the snapshot" in result.stdout.str()
    assert result.ret == 1


def test_benchmarks_whose_requests_are_never_sent_have_no_snapshot(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.benchmark("A-SME1", GOOD.replace("A-OK1", "A-SME1") + "evaluator_type: manual_sme\n")
    result = suite.run("benchmarks", "--snapshot-update", syrupy=True)
    result.stdout.fnmatch_lines(["1 snapshot generated."])
    assert snapshot_files(suite) == ["A-OK1.ambr"]


def test_compiled_rubric_has_no_empty_conditions_and_shows_every_example(suite: Suite) -> None:
    body = GOOD.replace(
        "inclusion_criteria: Apply when there is output. Flag if it does not say hello.\n",
        "examples:\n  - 'Output: bye.'\n  - 'POSITIVE example: Output: hello there.'\n",
    )
    suite.benchmark("A-OK1", body)
    suite.run("benchmarks", "-k", "prompt", "--snapshot-update", syrupy=True)
    text = (suite.root / "benchmarks/a/__snapshots__/A-OK1.ambr").read_text()
    assert "None of the automatic-fail conditions above is true." not in text
    assert "1. The output shows the behavior in the description above." in text
    assert "EXAMPLES OF FAILURES (few-shot):\n      - Output: bye." in text
    assert "EXAMPLES THAT PASS (few-shot):\n      - Output: hello there." in text


def test_benchmark_examples_are_kept_with_a_prompt_file(suite: Suite) -> None:
    suite.write(
        "evaluators/p.md",
        "SYSTEM: You are an evaluator.\n\nBEHAVIOR: greeting\n\nDESCRIPTION:\nSays hello.\n\nRUBRIC\n"
        "Automatic fail if any of the following are true:\n- No greeting.\n",
    )
    suite.benchmark("A-OK1", GOOD + "llm_prompt_file: evaluators/p.md\nexamples: ['Output: bye.']\n")
    suite.run("benchmarks", "-k", "prompt", "--snapshot-update", syrupy=True)
    text = (suite.root / "benchmarks/a/__snapshots__/A-OK1.ambr").read_text()
    assert "EXAMPLES OF FAILURES (few-shot):\n      - Output: bye." in text
