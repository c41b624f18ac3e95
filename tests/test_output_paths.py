"""Output paths: an output never replaces anything but a regular file (a device, a FIFO, a link
to one is a usage error before the run starts), never a file the suite reads, and the review
file is read with a bound."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from conftest import Suite

from pytest_llmjudge.suite.files import BenchmarkSpec
from pytest_llmjudge.suite.read_files import files_named, named_files

BENCHMARK = """\
code: B1
concept: The output says hello.
threshold: 1.0
inclusion_criteria: Apply when there is output. Flag if it does not say hello.
cases_file: data/cases.jsonl
"""
OPTIONS = ("--llmjudge-results", "--llmjudge-html", "--llmjudge-review-file")


def write_suite(suite: Suite) -> None:
    suite.benchmark("B1", BENCHMARK)
    suite.write("data/cases.jsonl", '{"id": "c1", "candidate_output": "hello"}\n')


def special_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """A FIFO, a link to it and (as root) a character device of our own, with what each is."""
    os.mkfifo(folder / "fifo")
    (folder / "link").symlink_to(folder / "fifo")
    made = {
        "fifo": (folder / "fifo", "a named pipe (FIFO)"),
        "link": (folder / "link", "a named pipe (FIFO)"),
    }
    if os.geteuid() == 0:  # a device like /dev/null, in the test's own folder
        os.mknod(folder / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        made["device"] = (folder / "null", "a character device")
    return made


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("option", OPTIONS[:2])
def test_an_output_that_is_not_a_regular_file_is_a_usage_error(suite: Suite, option: str) -> None:
    write_suite(suite)
    for path, what in special_files(suite.root).values():
        mode = os.lstat(path).st_mode
        result = suite.run("benchmarks", f"{option}={path}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
        assert f"ERROR: {option}: {path} is {what}, not a regular file: name a file to write" in (
            result.stderr.str()
        )
        assert os.lstat(path).st_mode == mode  # still the FIFO, the link, the device
        assert suite.judge_calls() == []  # refused before anything ran


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_review_file_that_is_a_fifo_or_a_device_is_refused_never_read(suite: Suite) -> None:
    write_suite(suite)
    made = special_files(suite.root)
    fifo, what = made["fifo"]
    # in a process of its own: reading the FIFO (as a review file used to be) waits for ever
    result = suite.pytester.runpytest_subprocess(
        "-p",
        "no:syrupy",
        "-p",
        "no:cacheprovider",
        "benchmarks",
        f"--llmjudge-review-file={fifo}",
        timeout=120,
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--llmjudge-review-file: {fifo} is {what}, not a regular file" in result.stderr.str()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    if "device" in made:
        device, what = made["device"]
        result = suite.run("benchmarks", f"--llmjudge-review-file={device}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_a_review_file_larger_than_the_bound_is_neither_read_whole_nor_replaced(suite: Suite) -> None:
    write_suite(suite)
    big = suite.root / "review.json"
    with big.open("wb") as stream:
        stream.truncate(65 * 2**20)  # sparse: 65 MiB of zeros, not a review file
    result = suite.run("benchmarks", f"--llmjudge-review-file={big}")
    output = result.stdout.str()
    assert (
        f"--llmjudge-review-file: cannot write {big}: it is larger than 64 MiB: not a review file" in output
    )
    with big.open("rb") as stream:
        assert stream.read(16) == b"\0" * 16  # untouched
    assert big.stat().st_size == 65 * 2**20


SUITE_FILES = {
    "data/cases.jsonl": "a cases file",
    "benchmarks/a/__snapshots__/B1.ambr": "a compiled-prompt snapshot",
    "pyproject.toml": "a pytest configuration file",
    "tox.ini": "a pytest configuration file",  # the suite fixture's ini file
    "rubrics/R1.yaml": "a rubric file",
    ".llmjudge/cache.sqlite": "the verdict cache",
}


def test_no_output_replaces_a_file_the_suite_reads(suite: Suite) -> None:
    write_suite(suite)
    suite.run("benchmarks").assert_outcomes(passed=2)  # the verdict cache and a snapshot-less run
    suite.write("benchmarks/a/__snapshots__/B1.ambr", "# a stored snapshot\n")
    suite.write("pyproject.toml", "[project]\nname = 'x'\n")
    suite.write("rubrics/R1.yaml", "code: R1\nbenchmarks: [B1]\n")
    kept = [name for name in SUITE_FILES if not name.endswith(".sqlite")]  # the cache: its own writes
    before = {name: (suite.root / name).read_bytes() for name in kept}
    names = list(SUITE_FILES)
    for start in range(0, len(names), len(OPTIONS)):
        chosen = list(zip(OPTIONS, names[start : start + len(OPTIONS)], strict=False))
        result = suite.run("benchmarks", *(f"{option}={name}" for option, name in chosen))
        output = result.stdout.str()
        assert "Traceback" not in output, output
        for option, name in chosen:
            expected = f"{option}: cannot write {suite.root / name}: it is {SUITE_FILES[name]} "
            assert expected + "(pass --llmjudge-overwrite to write over it)" in output, output
    assert {name: (suite.root / name).read_bytes() for name in kept} == before
    assert (suite.root / ".llmjudge/cache.sqlite").read_bytes().startswith(b"SQLite format 3\0")


NAMING = (
    "code: M1\nllm_prompt_file: prompts/judge.md\ncalibration_file: data/labels.jsonl\n"
    "task:\n  model: openai:gpt-4o\n  prompt_file: prompts/task.yaml\n  output_schema: schemas/out.json\n"
    "  few_shot: {n_shots: 2, examples_file: data/shots.jsonl}\ncases_file: data/cases.jsonl\n"
)


def test_the_files_a_benchmark_names_are_the_suites(tmp_path: Path) -> None:
    """Read from the file at the end of a run (an xdist controller collects none), or kept from
    the benchmark the run loaded: the same files."""
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks/M1.yaml").write_text(NAMING)
    real = tmp_path.resolve()
    expected = {
        real / "benchmarks/M1.yaml": "a benchmark file",
        real / "prompts/judge.md": "a prompt file",
        real / "data/labels.jsonl": "a calibration file",
        real / "prompts/task.yaml": "a task prompt template",
        real / "schemas/out.json": "a task output schema",
        real / "data/shots.jsonl": "a few-shot examples file",
        real / "data/cases.jsonl": "a cases file",
    }
    assert named_files(tmp_path, ["benchmarks/M1.yaml"]) == expected
    loaded = BenchmarkSpec.model_validate(yaml.safe_load(NAMING))
    known = {"benchmarks/M1.yaml": files_named(tmp_path, "benchmarks/M1.yaml", loaded)}
    (tmp_path / "benchmarks/M1.yaml").unlink()  # not read again
    assert named_files(tmp_path, ["benchmarks/M1.yaml"], known) == expected
    # a benchmark file another one names as its cases file is still a benchmark file
    known["data/cases.jsonl"] = files_named(tmp_path, "data/cases.jsonl", None)
    both = named_files(tmp_path, ["data/cases.jsonl", "benchmarks/M1.yaml"], known)
    assert both == {**expected, real / "data/cases.jsonl": "a benchmark file"}


def test_a_benchmark_that_no_longer_reads_names_only_itself(tmp_path: Path) -> None:
    (tmp_path / "B.yaml").write_text("code: [unclosed\n")
    assert named_files(tmp_path, ["B.yaml"]) == {(tmp_path / "B.yaml").resolve(): "a benchmark file"}
