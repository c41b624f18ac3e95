"""The verdict cache file's tables: created, upgraded from older files, checked on open."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

CACHE_FORMAT = 1


class CacheError(Exception):
    """A cache file that cannot be opened or is not a verdict cache."""


_COLUMNS = {
    "verdicts": (
        "key",
        "model",
        "benchmark",
        "case_id",
        "verdict",
        "input_tokens",
        "output_tokens",
        "created",
        "used",
        "request_key",
    ),
    "meta": ("name", "value"),
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    case_id TEXT NOT NULL,
    verdict TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created REAL NOT NULL,
    used REAL NOT NULL,
    request_key TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
# Caches written before request keys existed gain the column; their verdicts have none.
_ADD_REQUEST_KEY = "ALTER TABLE verdicts ADD COLUMN request_key TEXT"
_REQUEST_INDEX = "CREATE INDEX IF NOT EXISTS verdicts_by_request ON verdicts (request_key)"


def prepare(db: sqlite3.Connection, path: Path, deadline: float) -> None:
    """Set up a just-opened cache file: WAL mode, the tables, the request-key column of older
    files; refuse a damaged file, another program's tables, or another cache format."""
    # Switching a new file to WAL reports "database is locked" at once, without waiting, while
    # another process (an xdist worker) does the same: wait for it like for any other lock.
    pause = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            _add_request_key(db)
            _check_integrity(db, path)
            _check_format(db, path)
            return
        except sqlite3.OperationalError as exc:
            transient = "locked" in str(exc) or "busy" in str(exc)
            if not transient or time.monotonic() > deadline:
                db.close()
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
        except CacheError:
            db.close()
            raise


def _add_request_key(db: sqlite3.Connection) -> None:
    columns = tuple(row[1] for row in db.execute("PRAGMA table_info(verdicts)").fetchall())
    if columns == _COLUMNS["verdicts"][:-1]:
        try:
            db.execute(_ADD_REQUEST_KEY)
        except sqlite3.OperationalError as exc:  # another process (an xdist worker) just did
            if "duplicate column" not in str(exc):
                raise
    if "request_key" in columns or columns == _COLUMNS["verdicts"][:-1]:
        db.execute(_REQUEST_INDEX)


def _check_integrity(db: sqlite3.Connection, path: Path) -> None:
    """A damaged file (a page of zeros) or another program's ``verdicts`` table is refused now,
    with one clear message, not met as a traceback halfway through the run."""
    problems = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
    if problems != ["ok"]:
        raise CacheError(f"{path}: not a usable verdict cache (damaged: {problems[0]})")
    for table, expected in _COLUMNS.items():
        columns = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})").fetchall())
        if columns != expected:
            raise CacheError(
                f"{path}: not a usable verdict cache (its {table} table has columns "
                f"{', '.join(columns)}, not {', '.join(expected)})"
            )


def _check_format(db: sqlite3.Connection, path: Path) -> None:
    row = db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
    if row is None:
        db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (str(CACHE_FORMAT),))
    elif row[0] != str(CACHE_FORMAT):
        raise CacheError(
            f"{path}: cache format {row[0]}, this version reads format {CACHE_FORMAT}; "
            "delete the file or point --llmjudge-cache-path elsewhere"
        )
