"""The produced-output cache: what a task produced is read back under the same key, a damaged
entry or a foreign table is a miss said once, a table of an earlier version is upgraded, and a
failed write is reported, never raised."""

from __future__ import annotations

import sqlite3
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.suite.cache_damage import CacheDamageWarning
from pytest_llmjudge.tasks.output_cache import (
    OUTPUT_MODES,
    OutputCache,
    OutputCacheError,
    StoredOutput,
    output_key,
)

OLD_SCHEMA = """
CREATE TABLE outputs (
    key TEXT PRIMARY KEY, task TEXT NOT NULL, benchmark TEXT NOT NULL, case_id TEXT NOT NULL,
    output TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    latency REAL NOT NULL, created REAL NOT NULL
) WITHOUT ROWID
"""
OLD_ROW = "INSERT INTO outputs VALUES ('k-old', 'task', 'B1', 'c1', '\"old answer\"', 4, 5, 0.5, 0)"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "deep" / "cache.sqlite"


@pytest.fixture
def cache(path: Path) -> Iterator[OutputCache]:
    opened = OutputCache(path)
    yield opened
    opened.close()


def raw(path: Path, *statements: str) -> list[tuple[Any, ...]]:
    """Run SQL on the cache file directly; the rows of the last statement."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        rows: list[tuple[Any, ...]] = []
        for statement in statements:
            rows = db.execute(statement).fetchall()
        return rows
    finally:
        db.close()


def damage_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, CacheDamageWarning)]


def test_the_modes_of_the_task_cache() -> None:
    assert OUTPUT_MODES == ("on", "off", "replay")


def test_the_key_changes_with_the_task_and_with_what_it_was_given() -> None:
    key = output_key("fp-1", {"id": "c1", "inputs": {"a": 1}})
    assert key == output_key("fp-1", {"inputs": {"a": 1}, "id": "c1"})  # same content, same key
    assert key != output_key("fp-2", {"id": "c1", "inputs": {"a": 1}})
    assert key != output_key("fp-1", {"id": "c1", "inputs": {"a": 2}})


@pytest.mark.parametrize("output", ["Paris", {"answer": "Paris", "n": [1, 2]}, ""])
def test_a_stored_output_is_read_back_as_it_was_put(cache: OutputCache, output: Any) -> None:
    stored = StoredOutput(output, 12, 7, 1.5, {"model": "openai:gpt-x", "fingerprint": "fp_1"})
    cache.put("k1", "task-fp", "B1", "c1", stored)
    assert cache.get("k1") == stored
    assert cache.get("k2") is None  # another key: a miss


def test_an_output_without_its_model_is_read_back_without_one(cache: OutputCache, path: Path) -> None:
    cache.put("k1", "task-fp", "B1", "c1", StoredOutput("x", 0, 0, 0.0))
    assert cache.get("k1") == StoredOutput("x", 0, 0, 0.0, None)
    assert raw(path, "SELECT answered_by FROM outputs") == [(None,)]


def test_the_row_keeps_the_task_the_case_and_when(cache: OutputCache, path: Path) -> None:
    cache.put("k1", "task-fp", "B1", "c1", StoredOutput({"b": 1, "a": 2}, 3, 4, 0.25, {"z": 1, "model": "m"}))
    ((task, benchmark, case_id, output, created, answered),) = raw(
        path, "SELECT task, benchmark, case_id, output, created, answered_by FROM outputs WHERE key = 'k1'"
    )
    assert (task, benchmark, case_id) == ("task-fp", "B1", "c1")
    assert output == '{"a": 2, "b": 1}' and answered == '{"model": "m", "z": 1}'  # sorted keys
    assert created > 1_600_000_000  # the time it was kept


def test_a_miss_is_no_damage(cache: OutputCache) -> None:
    cache.put("k1", "t", "B1", "c1", StoredOutput("x", 1, 1, 0.1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.get("k2") is None
    assert damage_warnings(caught) == []


def test_a_second_put_under_the_same_key_replaces_the_first(cache: OutputCache) -> None:
    cache.put("k1", "t", "B1", "c1", StoredOutput("first", 1, 1, 0.1))
    cache.put("k1", "t", "B1", "c1", StoredOutput("second", 2, 2, 0.2))
    assert cache.get("k1") == StoredOutput("second", 2, 2, 0.2)


def test_outputs_survive_the_cache_being_closed_and_opened_again(path: Path) -> None:
    first = OutputCache(path)
    first.put("k1", "t", "B1", "c1", StoredOutput("kept", 1, 2, 0.5))
    first.close()
    again = OutputCache(path, read_only=True)
    assert again.get("k1") == StoredOutput("kept", 1, 2, 0.5)
    again.close()


def test_the_output_history_is_the_positive_token_counts_of_one_task_on_one_benchmark(
    cache: OutputCache, path: Path
) -> None:
    cache.put("k1", "t", "B1", "c1", StoredOutput("a", 1, 10, 0.1))
    cache.put("k2", "t", "B1", "c2", StoredOutput("b", 1, 20, 0.1))
    cache.put("k3", "t", "B1", "c3", StoredOutput("c", 1, 0, 0.1))  # no tokens: a Python task
    cache.put("k4", "other", "B1", "c1", StoredOutput("d", 1, 30, 0.1))
    cache.put("k5", "t", "B2", "c1", StoredOutput("e", 1, 40, 0.1))
    raw(path, "INSERT INTO outputs VALUES ('k6', 't', 'B1', 'c6', '\"f\"', 1, 'lots', 0.1, 0, NULL)")
    assert sorted(cache.output_history("B1", "t")) == [10, 20]
    assert cache.output_history("B3", "t") == []


def test_a_cache_file_in_a_folder_that_does_not_exist_yet_is_created(path: Path) -> None:
    cache = OutputCache(path)
    cache.close()
    assert path.is_file()


def test_a_read_only_cache_that_does_not_exist_is_an_error(path: Path) -> None:
    with pytest.raises(OutputCacheError, match=r"cache\.sqlite: cannot keep produced outputs here \("):
        OutputCache(path, read_only=True)
    assert not path.exists()


def test_a_cache_path_that_is_a_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(OutputCacheError, match=f"^{tmp_path}: cannot keep produced outputs here"):
        OutputCache(tmp_path)


def test_a_read_only_cache_writes_nothing(path: Path) -> None:
    OutputCache(path).close()
    cache = OutputCache(path, read_only=True)
    cache.put("k1", "t", "B1", "c1", StoredOutput("x", 1, 1, 0.1))
    assert cache.get("k1") is None and cache.write_errors != []
    cache.close()


def test_a_replay_of_a_file_without_an_outputs_table_misses_every_output(path: Path) -> None:
    path.parent.mkdir(parents=True)
    raw(path, "CREATE TABLE verdicts (key TEXT)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = OutputCache(path, read_only=True)
        assert cache.get("k1") is None and cache.output_history("B1", "t") == []
        cache.close()
    assert damage_warnings(caught) == []


def test_a_table_of_an_earlier_version_is_upgraded_when_the_cache_is_writable(path: Path) -> None:
    path.parent.mkdir(parents=True)
    raw(path, OLD_SCHEMA, OLD_ROW)
    cache = OutputCache(path)
    assert cache.get("k-old") == StoredOutput("old answer", 4, 5, 0.5, None)
    cache.put("k-new", "t", "B1", "c2", StoredOutput("new", 1, 1, 0.1, {"model": "m"}))
    assert cache.get("k-new") == StoredOutput("new", 1, 1, 0.1, {"model": "m"})
    cache.close()
    assert [row[1] for row in raw(path, "PRAGMA table_info(outputs)")][-1] == "answered_by"


def test_a_table_of_an_earlier_version_is_read_but_not_written_in_a_replay(path: Path) -> None:
    path.parent.mkdir(parents=True)
    raw(path, OLD_SCHEMA, OLD_ROW)
    cache = OutputCache(path, read_only=True)
    assert cache.get("k-old") == StoredOutput("old answer", 4, 5, 0.5, None)
    assert cache.output_history("B1", "task") == [5]
    cache.put("k-new", "t", "B1", "c2", StoredOutput("new", 1, 1, 0.1))
    cache.close()
    assert len(raw(path, "PRAGMA table_info(outputs)")) == 9  # not upgraded
    assert raw(path, "SELECT key FROM outputs") == [("k-old",)]


def test_an_upgrade_another_process_made_first_is_no_error(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path.parent.mkdir(parents=True)
    raw(path, OLD_SCHEMA, OLD_ROW)
    # another process adds the column between this one reading the columns and adding it
    calls: list[str] = []

    class Racing(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql.startswith("ALTER TABLE") and not calls:
                calls.append(sql)
                super().execute(sql, *args)
            return super().execute(sql, *args)

    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *args, **kwargs: connect(*args, factory=Racing, **kwargs))
    cache = OutputCache(path)
    monkeypatch.undo()
    assert calls == ["ALTER TABLE outputs ADD COLUMN answered_by TEXT"]
    cache.put("k-new", "t", "B1", "c2", StoredOutput("new", 1, 1, 0.1))
    assert cache.get("k-new") == StoredOutput("new", 1, 1, 0.1)
    cache.close()


def test_a_foreign_outputs_table_is_neither_read_nor_written_and_said_once(path: Path) -> None:
    path.parent.mkdir(parents=True)
    raw(
        path,
        "CREATE TABLE outputs (key TEXT PRIMARY KEY, value TEXT)",
        "INSERT INTO outputs VALUES ('k1', 'v')",
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = OutputCache(path)
        assert cache.get("k1") is None and cache.output_history("B1", "t") == []
        cache.put("k2", "t", "B1", "c1", StoredOutput("x", 1, 1, 0.1))
        cache.close()
    assert damage_warnings(caught) == [
        f"{path}: its outputs table has the columns key, value, not key, task, benchmark, case_id, output, "
        "input_tokens, output_tokens, latency, created, answered_by: no produced output is read from it or "
        "kept in it (delete the table or the file)"
    ]
    assert cache.write_errors == []
    assert raw(path, "SELECT key FROM outputs") == [("k1",)]


DAMAGED = [
    ("output = CAST('\"x\"' AS BLOB)", "the output is not JSON text"),
    ("output = 3", "the output is int, not a string or a mapping"),
    ("output = '[1, 2]'", "the output is list, not a string or a mapping"),
    ("output = '{\"a\": '", "Expecting value"),
    ("output = '" + "[" * 200 + "]" * 200 + "'", "the output is nested too deeply"),
    ("input_tokens = -1", "input_tokens is -1, not a count"),
    ("output_tokens = 'many'", "output_tokens is 'many', not a count"),
    ("latency = 'slow'", "latency is 'slow', not a duration"),
    ("answered_by = CAST('{}' AS BLOB)", "answered_by is not JSON text"),
    ("answered_by = 7", "answered_by does not name a model"),
    ('answered_by = \'{"fingerprint": "x"}\'', "answered_by does not name a model"),
    ("answered_by = '{\"model\": 3}'", "answered_by does not name a model"),
    ("answered_by = '[\"m\"]'", "answered_by does not name a model"),
]


@pytest.mark.parametrize(("change", "reason"), DAMAGED, ids=[c for c, _ in DAMAGED])
def test_a_damaged_entry_is_a_miss_said_once(
    cache: OutputCache, path: Path, change: str, reason: str
) -> None:
    key = "abcdef0123456789"
    cache.put(key, "t", "B1", "c1", StoredOutput("fine", 1, 1, 0.1, {"model": "m"}))
    cache.put("second", "t", "B1", "c2", StoredOutput("fine", 1, 1, 0.1))
    raw(path, f"UPDATE outputs SET {change}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.get(key) is None
        assert cache.get("second") is None
    (message,) = damage_warnings(caught)
    assert message.startswith(f"{path}: damaged produced-output entry abcdef012345 (")
    assert f"abcdef012345 ({reason}" in message
    assert message.endswith(
        "): read as a miss, its task runs again; further damaged entries are not reported"
    )


def test_a_damaged_entry_warns_but_never_raises_where_warnings_are_errors(
    cache: OutputCache, path: Path
) -> None:
    cache.put("k1", "t", "B1", "c1", StoredOutput("fine", 1, 1, 0.1))
    raw(path, "UPDATE outputs SET output = 3")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get("k1") is None


def test_a_write_that_fails_is_reported_not_raised_after_the_busy_timeout(path: Path) -> None:
    cache = OutputCache(path, busy_timeout=0.0)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    started = time.monotonic()
    try:
        cache.put("k1", "t", "B1", "c1", StoredOutput("x", 1, 1, 0.1))
    finally:
        waited = time.monotonic() - started
        holder.execute("ROLLBACK")
        holder.close()
    assert cache.write_errors == [f"{path}: output of B1::c1 not kept (database is locked)"]
    assert waited < 2.5  # no busy wait: sqlite3's own default would wait five seconds
    cache.close()


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_a_cache_file_locked_when_it_is_opened_fails_after_the_busy_timeout(
    path: Path, read_only: bool
) -> None:
    OutputCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    started = time.monotonic()
    try:
        with pytest.raises(OutputCacheError, match=r"\(database is locked\)$"):
            OutputCache(path, read_only=read_only, busy_timeout=0.0)
    finally:
        waited = time.monotonic() - started
        holder.execute("ROLLBACK")
        holder.close()
    assert waited < 2.5


def test_the_cache_may_be_used_from_another_thread(cache: OutputCache) -> None:
    import threading

    def work() -> None:
        cache.put("k1", "t", "B1", "c1", StoredOutput("from a thread", 1, 1, 0.1))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert cache.get("k1") == StoredOutput("from a thread", 1, 1, 0.1)


def test_a_read_only_cache_may_be_read_from_another_thread(path: Path) -> None:
    import threading

    writer = OutputCache(path)
    writer.put("k1", "t", "B1", "c1", StoredOutput("kept", 1, 1, 0.1))
    writer.close()
    cache = OutputCache(path, read_only=True)
    found: list[StoredOutput | None] = []
    thread = threading.Thread(target=lambda: found.append(cache.get("k1")))
    thread.start()
    thread.join()
    cache.close()
    assert found == [StoredOutput("kept", 1, 1, 0.1)]
