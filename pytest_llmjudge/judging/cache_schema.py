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


def has_request_keys(db: sqlite3.Connection) -> bool:
    return any(row[1] == "request_key" for row in db.execute("PRAGMA table_info(verdicts)").fetchall())


def connect_read_only(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A connection that never writes to ``path`` or its folder, checked like ``prepare`` checks.

    SQLite reads a WAL-mode file read-only only where it can use the ``-shm`` file beside it: in a
    read-only folder without one, the file is opened as immutable instead, which is safe when no
    ``-wal`` file holds verdicts not yet in the file (else the cache is refused, saying why).
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    db = sqlite3.connect(uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        db.close()
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise CacheError(
                f"{path}: cannot read this cache read-only: its {wal.name} file holds verdicts that "
                "only a writable folder lets SQLite read (open and close it once where it is writable)"
            ) from None
        db = sqlite3.connect(f"{uri}&immutable=1", uri=True, isolation_level=None, check_same_thread=False)
    try:
        _check_integrity(db, path, read_only=True)
        row = db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        if row is not None and row[0] != str(CACHE_FORMAT):
            raise CacheError(
                f"{path}: cache format {row[0]}, this version reads format {CACHE_FORMAT}; "
                "replay it with the version that wrote it"
            )
    except (CacheError, sqlite3.DatabaseError):
        db.close()
        raise
    return db


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


def _check_integrity(db: sqlite3.Connection, path: Path, *, read_only: bool = False) -> None:
    """A damaged file (a page of zeros) or another program's ``verdicts`` table is refused now,
    with one clear message, not met as a traceback halfway through the run. A file read
    ``read_only`` may be one written before request keys existed (the upgrade needs a write)."""
    problems = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
    if problems != ["ok"]:
        raise CacheError(f"{path}: not a usable verdict cache (damaged: {problems[0]})")
    for table, expected in _COLUMNS.items():
        columns = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})").fetchall())
        if read_only and table == "verdicts" and columns == expected[:-1]:
            continue
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
