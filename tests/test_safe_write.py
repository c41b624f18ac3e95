"""The output writer without pytest: whole files, refusals, folders in the way, the lock."""

from __future__ import annotations

import errno
import os
import stat
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


def test_a_protected_python_file_is_named_as_protected(tmp_path: Path) -> None:
    task = tmp_path / "task.py"
    task.write_text("def run(x): return x\n")
    guard = Guard({task.resolve(): "the task module"}, "--force")
    with pytest.raises(RefusedTarget, match=r"^it is the task module \(pass --force to write over it\)$"):
        write_text(task, "x", guard=guard)


def test_a_new_file_keeps_the_users_umask(tmp_path: Path) -> None:
    before = os.umask(0o022)
    try:
        write_text(tmp_path / "run.json", "{}\n")
        write_text(tmp_path / "new.json", "{}\n", replace=False)
    finally:
        os.umask(before)
    assert [stat.S_IMODE((tmp_path / n).stat().st_mode) for n in ("run.json", "new.json")] == [0o644, 0o644]


def test_missing_folders_are_made_and_what_cannot_be_written_is_refused(tmp_path: Path) -> None:
    write_text(tmp_path / "a" / "b" / "c" / "run.json", "x\n")
    assert (tmp_path / "a/b/c/run.json").read_text() == "x\n"
    (tmp_path / "review").mkdir()
    with pytest.raises(IsADirectoryError) as folder:
        write_text(tmp_path / "review", "x")
    assert (folder.value.errno, folder.value.strerror) == (errno.EISDIR, os.strerror(errno.EISDIR))
    (tmp_path / ".llmjudge").write_text("a file\n")
    with pytest.raises(NotADirectoryError) as blocked:
        write_text(tmp_path / ".llmjudge" / "B1.json", "x")
    assert blocked.value.strerror == os.strerror(errno.ENOTDIR)
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(RefusedTarget, match=r"^it is a named pipe \(FIFO\), not a regular file$"):
        write_text(tmp_path / "pipe", "x")


def test_without_hard_links_a_new_file_claims_its_name_then_is_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(source: object, target: object) -> None:
        raise PermissionError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(os, "link", no_links)
    path = tmp_path / "run.json"
    write_text(path, "first\n", replace=False)
    assert path.read_text() == "first\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    with pytest.raises(FileExistsError):
        write_text(path, "second\n", replace=False)
    assert path.read_text() == "first\n"
