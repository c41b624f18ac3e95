"""The output writer without pytest: whole files, refusals, folders in the way, the lock."""

from __future__ import annotations

import errno
import threading
from pathlib import Path

import pytest

from pytest_llmjudge.suite.safe_write import Guard, RefusedTarget, locked, write_text


def test_a_file_is_replaced_whole_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "out" / "run.json"
    write_text(path, "one\n")
    write_text(path, "two\n")
    assert path.read_text() == "two\n"
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]


def test_a_new_file_only_is_written_without_replace(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    write_text(path, "first\n", replace=False)
    with pytest.raises(FileExistsError):
        write_text(path, "second\n", replace=False)
    assert path.read_text() == "first\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_python_files_and_protected_files_are_refused_unless_overwrite(tmp_path: Path) -> None:
    source, benchmark = tmp_path / "conftest.py", tmp_path / "B1.yaml"
    source.write_text("# source\n")
    benchmark.write_text("code: B1\n")
    link = tmp_path / "report.html"
    link.symlink_to(source)
    guard = Guard({benchmark.resolve(): "a benchmark file"}, "--llmjudge-overwrite")
    for path, what in ((source, "a Python file"), (link, "a Python file"), (benchmark, "a benchmark file")):
        with pytest.raises(RefusedTarget, match=f"it is {what} \\(pass --llmjudge-overwrite"):
            write_text(path, "page\n", guard=guard)
    assert (source.read_text(), benchmark.read_text()) == ("# source\n", "code: B1\n")
    write_text(tmp_path / "new.py", "# a new file is no source yet\n", guard=guard)
    write_text(source, "page\n", guard=Guard(overwrite=True))
    assert source.read_text() == "page\n"


def test_folders_in_the_way_are_errors_that_name_them(tmp_path: Path) -> None:
    (tmp_path / "review").mkdir()
    with pytest.raises(IsADirectoryError):
        write_text(tmp_path / "review", "x")
    (tmp_path / ".llmjudge").write_text("a file\n")
    with pytest.raises(NotADirectoryError) as raised:
        write_text(tmp_path / ".llmjudge" / "calibration" / "B1.json", "x")
    assert raised.value.errno == errno.ENOTDIR and raised.value.filename == str(tmp_path / ".llmjudge")


def test_a_lock_held_too_long_is_a_timeout(tmp_path: Path) -> None:
    path = tmp_path / "review.json"
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with locked(path):
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    try:
        with pytest.raises(TimeoutError, match="another run held"), locked(path, timeout=0.1):
            pass
    finally:
        release.set()
        holder.join()
    with locked(path, timeout=0.1):
        pass
