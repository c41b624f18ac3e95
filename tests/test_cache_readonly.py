"""Replay and ``llmjudge cache stats`` read a cache they cannot write: a cache mounted read-only
in key-less CI (a read-only file in a read-only folder) is opened read-only and never written.

As root, file modes do not stop writes, so the runs here drop to the ``nobody`` user."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import GOOD, Suite

from pytest_llmjudge.execution.cache import VerdictCache
from pytest_llmjudge.judging.verdict import Usage, Verdict
from pytest_llmjudge.tasks.output_cache import OutputCache, StoredOutput

NOBODY = 65534


def unprivileged(command: list[str]) -> list[str]:
    """``command`` as a user the file modes bind (``nobody`` when this is root)."""
    if os.geteuid() != 0:
        return command
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot drop to a user that file modes bind")
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *command]


@pytest.fixture
def project(suite: Suite) -> Iterator[Path]:
    """A copy of a suite whose verdicts are cached, readable by anyone, with its cache in a
    read-only folder ``mounted/``; the suite folder itself stays writable (results files)."""
    suite.benchmark("A-OK1", GOOD)
    suite.run().assert_outcomes(passed=2)
    copy = Path(tempfile.mkdtemp(prefix="llmjudge-ro-"))
    try:
        for name in ("benchmarks", "conftest.py", "tox.ini"):
            source = suite.root / name
            if source.is_dir():
                shutil.copytree(source, copy / name)
            elif source.exists():
                shutil.copy(source, copy / name)
        (copy / "mounted").mkdir()
        for found in (suite.root / ".llmjudge").glob("cache.sqlite*"):
            shutil.copy(found, copy / "mounted" / found.name)
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o777 if path.is_dir() else 0o666)
        for path in (copy / "mounted").iterdir():
            path.chmod(0o444)
        (copy / "mounted").chmod(0o555)
        yield copy
    finally:
        (copy / "mounted").chmod(0o755)
        shutil.rmtree(copy)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_replay_reads_a_read_only_cache(project: Path) -> None:
    before = snapshot(project / "mounted")
    args = ["-p", "no:cacheprovider", "-p", "no:syrupy", "--color=no", "--llmjudge-cache=replay"]
    command = [
        sys.executable,
        "-m",
        "pytest",
        *args,
        "--llmjudge-cache-path=mounted/cache.sqlite",
        "benchmarks",
    ]
    env = {**os.environ, "HOME": str(project), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run(
        unprivileged(command), cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "2 passed" in out and "0 model call(s), 1 cache hit(s)" in out, out
    assert snapshot(project / "mounted") == before  # nothing written, no -wal or -shm made
    stats = subprocess.run(
        unprivileged(
            [
                sys.executable,
                "-m",
                "pytest_llmjudge.cli.main",
                "cache",
                "--path",
                "mounted/cache.sqlite",
                "stats",
            ]
        ),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stats.returncode == 0, stats.stderr
    assert "entries: 1 verdict(s)" in stats.stdout and "fake-judge" in stats.stdout


def test_a_read_only_open_never_writes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    VerdictCache(path).close()
    before = path.read_bytes()
    cache = VerdictCache(path, read_only=True)
    assert cache.get_many(["missing"]) == {} and cache.get_unnamed(["missing"]) == {}
    assert not cache.put("k", Verdict(True, "fine"), "m", Usage(), "B1", "c1")
    assert cache.stats().entries == 0
    cache.close()
    assert path.read_bytes() == before  # (SQLite may add its -shm beside it in a writable folder)
    assert VerdictCache(path).stats().entries == 0


def test_a_read_only_cache_from_before_request_keys_is_read(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    VerdictCache(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP INDEX IF EXISTS verdicts_by_request")
    db.execute("ALTER TABLE verdicts DROP COLUMN request_key")
    db.commit()
    db.close()
    path.chmod(stat.S_IRUSR)
    cache = VerdictCache(path, read_only=True)
    assert cache.get_unnamed(["any"]) == {}
    cache.close()


def test_a_file_holding_only_produced_outputs_is_read_as_an_empty_verdict_cache(tmp_path: Path) -> None:
    """A run whose cases were all code-checked keeps produced outputs but no verdict yet: replay,
    the estimate and ``llmjudge cache stats`` read it, never write it, and find the outputs."""
    path = tmp_path / "cache.sqlite"
    outputs = OutputCache(path)
    outputs.put("k1", "app.task:run", "T1", "c1", StoredOutput("Paris", 3, 1, 0.1, None))
    outputs.close()
    before = path.read_bytes()
    cache = VerdictCache(path, read_only=True)
    assert cache.get_many(["missing"]) == {} and cache.stats().entries == 0
    cache.close()
    assert path.read_bytes() == before
    assert OutputCache(path, read_only=True).get("k1") is not None
