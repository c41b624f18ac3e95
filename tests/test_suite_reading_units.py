"""Reading the files a suite names, in process (``suite/jsonl.py``, ``reading.py``,
``read_files.py``): each refusal's exact message and location, as a user sees it at the start of
a run, and which files a run's outputs may never replace. The run-level tests
(``tests/test_hostile_input.py``, ``tests/test_output_paths.py``) show the same through pytest."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pytest_llmjudge.suite.errors import Location, SpecError
from pytest_llmjudge.suite.jsonl import json_lines
from pytest_llmjudge.suite.read_files import BENCHMARK_FILE, files_named, named_files, what_it_is
from pytest_llmjudge.suite.reading import check_regular_file, read_regular_file, resolve_in_root

AT = Location("benchmarks/B.yaml", 7, 13)


def error_of(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(SpecError) as raised:
        result = call(*args, **kwargs)  # type: ignore[operator]
        list(result) if hasattr(result, "__next__") else None
    return str(raised.value)


def test_json_lines_skip_blank_lines_and_keep_line_numbers() -> None:
    text = '{"a": 1}\n\n   \n[2]\r\n"x"\n'
    assert list(json_lines(text, "d/C.jsonl")) == [(1, {"a": 1}), (4, [2]), (5, "x")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"a": 1}\n{"a": "x\ty"}\n',
            "d/C.jsonl:2:9: <file>: invalid JSON: control character '\\t' at line 2 column 9; "
            "inside a string write it as \\u0009\n  hint: one JSON object per line",
        ),
        (
            '{"a": 1}\n{bad}\n',
            "d/C.jsonl:2:2: <file>: invalid JSON: Expecting property name enclosed in double quotes\n"
            "  hint: one JSON object per line",
        ),
        (
            "1\n\n" + "[" * 200 + "]" * 200 + "\n",
            "d/C.jsonl:3:101: <file>: values nest more than 100 levels deep\n"
            "  hint: flatten the structure; cases need only a few levels",
        ),
        (
            "9" * 5000 + "\n",
            "d/C.jsonl:1:1: <file>: invalid JSON: Exceeds the limit (4300 digits) for integer string "
            "conversion: value has 5000 digits\n  hint: quote it as a string",
        ),
    ],
    ids=["control-character", "not-json", "too-deep", "huge-integer"],
)
def test_a_bad_json_line_is_an_error_at_its_line_and_column(text: str, message: str) -> None:
    assert error_of(json_lines, text, "d/C.jsonl") == message


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\x00two")
    assert read_regular_file(tmp_path / "a.txt", "a.txt") == b"one\x00two"


def test_a_missing_file_is_named_as_the_field_that_points_to_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    assert error_of(read_regular_file, missing, "data/nope.jsonl") == (
        "data/nope.jsonl:1:1: <file>: the file does not exist\n  hint: check the path"
    )
    assert error_of(
        read_regular_file, missing, "data/nope.jsonl", label="cases file", at=AT, field="cases_file"
    ) == (
        "benchmarks/B.yaml:7:13: cases_file: cases file 'data/nope.jsonl' does not exist\n"
        "  hint: paths in benchmark files are relative to the repository root (pytest's rootdir)"
    )
    (tmp_path / "plain").write_text("x")
    assert error_of(
        read_regular_file, tmp_path / "plain" / "x.md", "plain/x.md", label="prompt file", at=AT
    ) == (
        "benchmarks/B.yaml:7:13: <file>: prompt file 'plain/x.md' does not exist\n"
        "  hint: paths in benchmark files are relative to the repository root (pytest's rootdir)"
    )


def test_what_is_not_a_regular_file_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    assert error_of(read_regular_file, tmp_path / "folder", "folder", label="cases file", at=AT) == (
        "benchmarks/B.yaml:7:13: <file>: cases file 'folder' is not a regular file but a directory\n"
        "  hint: point to a text file"
    )
    assert error_of(read_regular_file, tmp_path / "pipe", "pipe") == (
        "pipe:1:1: <file>: the file is not a regular file but a named pipe (FIFO)\n"
        "  hint: point to a text file"
    )
    assert error_of(read_regular_file, Path("/dev/null"), "/dev/null").endswith(
        "is not a regular file but a character device\n  hint: point to a text file"
    )
    assert error_of(
        check_regular_file, tmp_path / "pipe", "pipe", label="prompt file", at=AT, field="llm_prompt_file"
    ) == (
        "benchmarks/B.yaml:7:13: llm_prompt_file: prompt file 'pipe' is not a regular file but a named pipe "
        "(FIFO)\n  hint: point to a text file"
    )
    check_regular_file(Path(__file__), "t.py", label="prompt file", at=AT, field="llm_prompt_file")


def test_paths_that_cannot_be_opened_say_why(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert error_of(read_regular_file, tmp_path / "loop", "loop", label="prompt file", at=AT) == (
        "benchmarks/B.yaml:7:13: <file>: prompt file 'loop': too many levels of symbolic links\n"
        "  hint: a symbolic link on this path points back to itself"
    )
    long = tmp_path / ("x" * 300)
    assert error_of(read_regular_file, long, "x.md") == (
        "x.md:1:1: <file>: the file: file name too long\n  hint: use a shorter path"
    )
    assert error_of(read_regular_file, tmp_path / "a\x00b", "a") == (
        "a:1:1: <file>: the file: the path contains a NUL character\n  hint: fix the path"
    )
    assert error_of(check_regular_file, tmp_path / "a\x00b", "a", label="cases file", at=AT, field="f") == (
        "benchmarks/B.yaml:7:13: f: cases file 'a': the path contains a NUL character\n  hint: fix the path"
    )
    assert error_of(check_regular_file, tmp_path / "loop", "loop", label="cases file", at=AT, field="f") == (
        "benchmarks/B.yaml:7:13: f: cases file 'loop': too many levels of symbolic links\n"
        "  hint: a symbolic link on this path points back to itself"
    )


def test_other_failures_say_what_the_system_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: object) -> os.stat_result:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "stat", broken)
    assert error_of(read_regular_file, tmp_path / "a.md", "a.md", label="prompt file", at=AT, field="f") == (
        "benchmarks/B.yaml:7:13: f: cannot read prompt file 'a.md': Input/output error\n"
        "  hint: check the path and its permissions"
    )
    monkeypatch.setattr(os, "stat", lambda path: (_ for _ in ()).throw(PermissionError()))
    assert error_of(read_regular_file, tmp_path / "a.md", "a.md") == (
        "a.md:1:1: <file>: cannot read the file: PermissionError\n  hint: check the path and its permissions"
    )
    # a kind of file no name is known for (a door, a whiteout): still refused
    monkeypatch.setattr(os, "stat", lambda path: os.stat_result((0,) * 10))
    assert error_of(check_regular_file, tmp_path / "a.md", "a.md", label="prompt file", at=AT, field="f") == (
        "benchmarks/B.yaml:7:13: f: prompt file 'a.md' is not a regular file but a special file\n"
        "  hint: point to a text file"
    )


def test_a_long_path_is_cut_in_messages(tmp_path: Path) -> None:
    name = "d/" + "n" * 400
    shown_name = "'" + name[:198] + "…"  # 200 characters, as every message cuts a path
    assert error_of(
        check_regular_file, tmp_path / "missing", name, label="prompt file", at=AT, field="f"
    ).startswith(f"benchmarks/B.yaml:7:13: f: prompt file {shown_name} does not exist")
    assert error_of(resolve_in_root, "../" + name, tmp_path, at=AT, field="f").startswith(
        "benchmarks/B.yaml:7:13: f: '../" + name[:195] + "… is outside the repository root"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="file modes do not stop root")
def test_an_unreadable_file_says_so(tmp_path: Path) -> None:
    locked = tmp_path / "locked.md"
    locked.write_text("x")
    locked.chmod(0)
    assert error_of(read_regular_file, locked, "locked.md") == (
        "locked.md:1:1: <file>: cannot read the file: Permission denied\n"
        "  hint: check the path and its permissions"
    )


def test_a_path_stays_inside_the_root_unless_allowed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "data").mkdir(parents=True)
    (tmp_path / "outside.jsonl").write_text("{}\n")
    (root / "data" / "link.jsonl").symlink_to(tmp_path / "outside.jsonl")
    assert resolve_in_root("data/x.jsonl", root, at=AT, field="cases_file") == root / "data" / "x.jsonl"
    for relative in ("../outside.jsonl", "data/link.jsonl"):
        assert error_of(resolve_in_root, relative, root, at=AT, field="cases_file") == (
            f"benchmarks/B.yaml:7:13: cases_file: '{relative}' is outside the repository root\n"
            "  hint: keep the file inside the repository, or allow it with --llmjudge-allow-outside-root"
        )
        allowed = resolve_in_root(relative, root, at=AT, field="cases_file", allow_outside=True)
        assert allowed == tmp_path / "outside.jsonl"
    assert error_of(resolve_in_root, "a\x00b", root, at=AT, field="cases_file") == (
        "benchmarks/B.yaml:7:13: cases_file: path 'a\\x00b' contains a NUL character\n  hint: fix the path"
    )


def test_every_file_a_benchmark_names_is_known_as_what_it_is(tmp_path: Path) -> None:
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "B.yaml").write_text(
        "code: B\ncases_file: data/c.jsonl\ncalibration_file: data/cal.jsonl\nllm_prompt_file: e/p.md\n"
        "task:\n  prompt_file: t/t.md\n  output_schema: t/s.json\n"
        "  few_shot: {examples_file: t/shots.jsonl}\n"
    )
    (tmp_path / "benchmarks" / "Broken.yaml").write_text("code: [\n")
    real = Path(os.path.realpath(tmp_path))
    found = named_files(tmp_path, ["benchmarks/B.yaml", "benchmarks/Broken.yaml", "benchmarks/B.yaml"])
    assert found == {
        real / "benchmarks" / "B.yaml": BENCHMARK_FILE,
        real / "data" / "c.jsonl": "a cases file",
        real / "data" / "cal.jsonl": "a calibration file",
        real / "e" / "p.md": "a prompt file",
        real / "t" / "t.md": "a task prompt template",
        real / "t" / "s.json": "a task output schema",
        real / "t" / "shots.jsonl": "a few-shot examples file",
        real / "benchmarks" / "Broken.yaml": BENCHMARK_FILE,  # it names nothing, but is read
    }
    # what the collection already knows is not read again; a benchmark file named by another stays one
    known = {
        "benchmarks/A.yaml": {real / "benchmarks" / "B.yaml": "a prompt file", real / "x.md": "a prompt file"}
    }
    both = named_files(tmp_path, ["benchmarks/B.yaml", "benchmarks/A.yaml"], known)
    assert both[real / "benchmarks" / "B.yaml"] == BENCHMARK_FILE
    assert both[real / "x.md"] == "a prompt file"
    assert real / "data" / "c.jsonl" in both
    # a loaded benchmark names its files as its YAML does
    from pytest_llmjudge.suite.files import load_benchmark

    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "p.md").write_text(
        "SYSTEM: x\n\nRUBRIC\n\nPass if all of the following are true:\n- ok\n"
    )
    (tmp_path / "benchmarks" / "C.yaml").write_text(
        "code: C\nlabel: c\nthreshold: 1.0\nevaluator_type: llm_judge\nllm_prompt_file: e/p.md\n"
        "cases:\n  - {id: a, candidate_output: x}\n"
    )
    spec = load_benchmark(tmp_path / "benchmarks" / "C.yaml", "benchmarks/C.yaml", tmp_path).spec
    assert files_named(tmp_path, "benchmarks/C.yaml", spec) == {
        real / "benchmarks" / "C.yaml": BENCHMARK_FILE,
        real / "e" / "p.md": "a prompt file",
    }
    # values that are not paths name nothing
    assert files_named(
        tmp_path, "b.yaml", {"cases_file": "", "llm_prompt_file": "a\x00b", "task": "m:f"}
    ) == {real / "b.yaml": BENCHMARK_FILE}


def test_what_a_run_output_may_not_replace(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    rubrics = real / "rubrics"
    named = {real / "data" / "c.jsonl": "a cases file"}
    ini = tmp_path / "conf" / "my.ini"

    def what(target: Path) -> str | None:
        return what_it_is(target, ini=ini, rubrics=rubrics, named=named)

    assert what(real / "data" / "c.jsonl") == "a cases file"
    assert what(real / "__snapshots__" / "x.ambr") == "a compiled-prompt snapshot"
    assert what(real / "sub" / "tox.ini") == "a pytest configuration file"
    assert what(real / "conf" / "my.ini") == "a pytest configuration file"
    assert what(rubrics / "deep" / "r.yml") == "a rubric file"
    assert what(rubrics / "r.yaml") == "a rubric file"
    assert what(rubrics / "notes.md") is None
    assert what(real / "elsewhere" / "r.yaml") is None
    assert what(real / "results.json") is None
    assert what_it_is(real / "my.ini", ini=None, rubrics=rubrics, named={}) is None
