"""Caches of several runs (a CI matrix's shards) as one file: every verdict and produced output of
each, so that a run over the whole suite with the merged cache makes no call.

The verdict and output caches share one SQLite file (tables ``verdicts`` and ``outputs``). Two
entries under one key with different answers (a judge re-asked on another runner) keep the
newest, and each such key is counted and reported.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .cache import VerdictCache
from .cache_schema import CacheError

# table → the column holding its answer (what two runners may disagree on)
_ANSWERS = {"verdicts": "verdict", "outputs": "output"}


@dataclass
class MergeReport:
    """What each table took from each file, and the keys whose answers differed."""

    taken: dict[tuple[str, str], int] = field(default_factory=dict)  # (file, table) → entries
    conflicts: list[str] = field(default_factory=list)  # one line per key answered differently


def merge_caches(sources: Sequence[Path], target: Path) -> MergeReport:
    """Write every entry of ``sources`` into a new cache at ``target`` (replacing it whole once
    written); a source that is not a cache is a ``CacheError`` naming it."""
    for source in sources:
        VerdictCache(source, create=False, read_only=True).close()  # refuses a damaged or foreign file
    partial = target.with_name(f".{target.name}.{os.getpid()}.merging")
    partial.unlink(missing_ok=True)
    VerdictCache(partial).close()  # the current layout and format mark
    report = MergeReport()
    db = sqlite3.connect(f"file:{partial}", uri=True, isolation_level=None)
    try:
        for source in sources:
            _merge_one(db, source, report)
    finally:
        db.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{partial}{suffix}").unlink(missing_ok=True)
    os.replace(partial, target)
    return report


def _merge_one(db: sqlite3.Connection, source: Path, report: MergeReport) -> None:
    db.execute("ATTACH DATABASE ? AS source", (f"file:{source}?mode=ro",))
    try:
        db.execute("BEGIN")
        for table, answer in _ANSWERS.items():
            if not _has_table(db, "source", table):
                continue
            if not _has_table(db, "main", table):
                db.execute(f"CREATE TABLE main.{table} AS SELECT * FROM source.{table} WHERE 0")
            columns = [c for c in _columns(db, "source", table) if c in _columns(db, "main", table)]
            report.conflicts += _conflicts(db, table, answer, source)
            names = ", ".join(columns)
            before = db.total_changes
            # the newer entry of a key wins (``created``); an equal answer keeps the first
            newer = ", ".join(f"excluded.{c}" for c in columns)
            db.execute(
                f"INSERT INTO main.{table} ({names}) SELECT {names} FROM source.{table} WHERE true "
                f"ON CONFLICT (key) DO UPDATE SET ({names}) = ({newer}) WHERE excluded.created > "
                f"main.{table}.created AND excluded.{answer} != main.{table}.{answer}"
            )
            report.taken[(str(source), table)] = db.total_changes - before
        db.execute("COMMIT")
    finally:
        db.execute("DETACH DATABASE source")


def _conflicts(db: sqlite3.Connection, table: str, answer: str, source: Path) -> list[str]:
    rows = db.execute(
        f"SELECT m.key, m.benchmark, m.case_id, m.created, s.created FROM main.{table} AS m "
        f"JOIN source.{table} AS s ON s.key = m.key WHERE s.{answer} != m.{answer}"
    ).fetchall()
    kind = "verdict" if table == "verdicts" else "output"
    return [
        f"{benchmark}::{case} ({kind} {key[:12]}): answered differently in {source}; "
        f"kept the newest ({'this one' if theirs > ours else 'the one merged before'})"
        for key, benchmark, case, ours, theirs in rows
    ]


def _has_table(db: sqlite3.Connection, schema: str, table: str) -> bool:
    found = db.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?", (table,))
    return found.fetchone() is not None


def _columns(db: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA {schema}.table_info({table})")]


__all__ = ["CacheError", "MergeReport", "merge_caches"]
