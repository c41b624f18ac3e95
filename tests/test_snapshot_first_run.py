"""A new benchmark's prompt snapshot is recorded on its first run outside CI, as Jest records one;
in CI a missing snapshot fails, and a changed snapshot fails everywhere until --snapshot-update."""

from __future__ import annotations

import pytest

from pytest_llmjudge.compile.snapshot import ci_from_env
from tests.conftest import GOOD, Suite

SNAPSHOT = "benchmarks/a/__snapshots__/A-OK1.ambr"


def test_first_run_outside_ci_records_the_snapshot_and_passes(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    result = suite.run("benchmarks", syrupy=True)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            f"snapshot recorded: A-OK1 in {SNAPSHOT} (new; commit it with the benchmark)",
            "1 snapshot generated.",
        ]
    )
    assert result.ret == 0
    assert (suite.root / SNAPSHOT).is_file()
    result = suite.run("benchmarks", syrupy=True)
    result.stdout.fnmatch_lines(["1 snapshot passed."])
    assert "snapshot recorded" not in result.stdout.str()
    assert result.ret == 0


def test_changed_snapshot_still_fails_outside_ci_until_updated(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    assert suite.run("benchmarks", syrupy=True).ret == 0  # recorded
    suite.benchmark("A-OK1", GOOD.replace("The output says hello.", "The output says goodbye."))
    result = suite.run("benchmarks", syrupy=True)
    result.stdout.fnmatch_lines(
        [
            f"compiled judge requests of A-OK1 differ from the snapshot in {SNAPSHOT}:",
            "FAILED *A-OK1::prompt*",
        ]
    )
    assert "snapshot recorded" not in result.stdout.str()
    assert result.ret == 1
    assert suite.run("benchmarks", "--snapshot-update", syrupy=True).ret == 0
    assert suite.run("benchmarks", syrupy=True).ret == 0


@pytest.mark.parametrize("how", ["CI=true", "CI=1", "--llmjudge-ci"])
def test_in_ci_a_missing_snapshot_fails_and_is_not_written(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    options = []
    if how.startswith("CI="):
        monkeypatch.setenv("CI", how.removeprefix("CI="))
    else:
        options.append(how)
    suite.benchmark("A-OK1", GOOD)
    result = suite.run("benchmarks", *options, syrupy=True)
    result.stdout.fnmatch_lines(
        [
            f"no snapshot of the compiled judge requests of A-OK1 in {SNAPSHOT}: in CI (CI is set, or "
            "--llmjudge-ci) a missing snapshot is not recorded.",
            "Record it on your machine (a run outside CI records it, or use --snapshot-update) "
            f"and commit {SNAPSHOT}.",
            "FAILED *A-OK1::prompt*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert result.ret == 1
    assert not (suite.root / SNAPSHOT).exists()


def test_ci_false_is_not_ci(suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "false")
    suite.benchmark("A-OK1", GOOD)
    result = suite.run("benchmarks", syrupy=True)
    result.stdout.fnmatch_lines(["snapshot recorded: A-OK1 in *"])
    assert result.ret == 0


def test_first_run_under_xdist_records_every_snapshot(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.benchmark("A-OK2", GOOD.replace("A-OK1", "A-OK2"))
    result = suite.run("benchmarks", "-n", "2", syrupy=True)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines_random(["snapshot recorded: A-OK1 in *", "snapshot recorded: A-OK2 in *"])
    assert result.ret == 0
    assert suite.run("benchmarks", syrupy=True).ret == 0


@pytest.mark.parametrize(
    ("value", "ci"),
    [
        (None, False),
        ("", False),
        ("false", False),
        ("FALSE", False),
        ("0", False),
        ("true", True),
        ("1", True),
    ],
)
def test_ci_variable(value: str | None, ci: bool) -> None:
    assert ci_from_env(value) is ci
