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
        "request_chars",
        "answered_by",
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
    request_key TEXT,
    request_chars INTEGER,
    answered_by TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
# Columns added since the first files: older caches gain them (their verdicts have none), in
# whatever order they are added; reads and writes name their columns.
# ``answered_by``: JSON of the model that answered (resolved snapshot, fingerprint), null when unknown
_LATER_COLUMNS = {"request_key": "TEXT", "request_chars": "INTEGER", "answered_by": "TEXT"}
_BASE = len(_COLUMNS["verdicts"]) - len(_LATER_COLUMNS)
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
            _add_later_columns(db)
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
    return has_column(db, "request_key")


def _no_verdicts_yet(db: sqlite3.Connection) -> None:
    """A file holding only produced outputs (a run whose cases were all code-checked, or one with
    the verdict cache off) has no verdict tables yet: read it as an empty verdict cache, with
    empty tables of this connection's own (``TEMP``), never written to the file."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables and not tables & set(_COLUMNS):
        db.executescript(_SCHEMA.replace("CREATE TABLE IF NOT EXISTS", "CREATE TEMP TABLE"))


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
        _no_verdicts_yet(db)
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


def has_column(db: sqlite3.Connection, name: str) -> bool:
    return name in _columns(db, "verdicts")


def _columns(db: sqlite3.Connection, table: str) -> tuple[str, ...]:
    return tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})").fetchall())


def _older_layout(columns: tuple[str, ...]) -> bool:
    """A verdicts table of this program from before some of the later columns existed."""
    later = columns[_BASE:]
    distinct = len(set(later)) == len(later)
    return columns[:_BASE] == _COLUMNS["verdicts"][:_BASE] and distinct and set(later) <= set(_LATER_COLUMNS)


def _add_later_columns(db: sqlite3.Connection) -> None:
    columns = _columns(db, "verdicts")
    if not _older_layout(columns):
        return  # another program's table: ``_check_integrity`` refuses it
    for name, kind in _LATER_COLUMNS.items():
        if name in columns:
            continue
        try:
            db.execute(f"ALTER TABLE verdicts ADD COLUMN {name} {kind}")
        except sqlite3.OperationalError as exc:  # another process (an xdist worker) just did
            if "duplicate column" not in str(exc):
                raise
    db.execute(_REQUEST_INDEX)


def _check_integrity(db: sqlite3.Connection, path: Path, *, read_only: bool = False) -> None:
    """A damaged file (a page of zeros) or another program's ``verdicts`` table is refused now,
    with one clear message, not met as a traceback halfway through the run. A file read
    ``read_only`` may be one written before some later columns existed (the upgrade needs a write)."""
    problems = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
    if problems != ["ok"]:
        raise CacheError(f"{path}: not a usable verdict cache (damaged: {problems[0]})")
    for table, expected in _COLUMNS.items():
        columns = _columns(db, table)
        # an upgraded file has every column (in the order they were added); one read only may lack some
        upgraded = read_only or set(columns) == set(expected)
        if table == "verdicts" and _older_layout(columns) and upgraded:
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
