"""Produced outputs, content-addressed: a table beside the verdicts' in the cache file.

The key is the task's fingerprint with what the task is given for the case, so a rerun with
nothing changed calls no task, and a bumped ``task_version`` or another task model misses.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..suite.cache_damage import count, seconds, warn_damaged
from ..suite.hashing import digest
from ..suite.nesting import json_too_deep
from ..suite.safe_write import make_folder

OUTPUT_MODES = ("on", "off", "replay")
_COLUMNS = (
    "key",
    "task",
    "benchmark",
    "case_id",
    "output",
    "input_tokens",
    "output_tokens",
    "latency",
    "created",
)
# added later, nullable: a table without them is upgraded when written, read as NULL when not
# ``answered_by``: JSON of the model that answered the task call (resolved snapshot, fingerprint)
_LATER_COLUMNS = ("answered_by",)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outputs (
    key TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    case_id TEXT NOT NULL,
    output TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latency REAL NOT NULL,
    created REAL NOT NULL,
    answered_by TEXT
) WITHOUT ROWID
"""


class OutputCacheError(Exception):
    """A cache file that cannot hold produced outputs."""


def output_key(fingerprint: str, given: Any) -> str:
    """The cache key of one produced output: the task and what it was given."""
    return digest({"task": fingerprint, "given": given})


@dataclass(frozen=True)
class StoredOutput:
    output: Any
    input_tokens: int
    output_tokens: int
    latency: float
    # who answered the task call, ``{"model": …, "fingerprint": …}``; None: not known (a Python
    # task, an answer naming no model, an output stored before it was recorded)
    answered_by: dict[str, Any] | None = None


def _answered_by(text: object) -> dict[str, Any] | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise TypeError("answered_by is not JSON text")
    value = json.loads(text)
    if not (isinstance(value, dict) and isinstance(value.get("model"), str)):
        raise TypeError("answered_by does not name a model")
    return value


def _stored(row: tuple[Any, ...]) -> StoredOutput:
    """A stored row as an output, as a task returns one (a string or a mapping); ``TypeError`` or
    ``ValueError`` naming what is damaged."""
    text, tokens_in, tokens_out, latency, answered = row
    if not isinstance(text, str):
        raise TypeError("the output is not JSON text")
    if json_too_deep(text) is not None:
        raise ValueError("the output is nested too deeply")
    output = json.loads(text)
    if not isinstance(output, (str, dict)):
        raise TypeError(f"the output is {type(output).__name__}, not a string or a mapping")
    return StoredOutput(
        output,
        count(tokens_in, "input_tokens"),
        count(tokens_out, "output_tokens"),
        seconds(latency, "latency"),
        _answered_by(answered),
    )


class OutputCache:
    """One connection, usable from any thread (calls are serialised); ``read_only`` for replay."""

    def __init__(self, path: Path, *, read_only: bool = False, busy_timeout: float = 30.0) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._warned = False
        self.write_errors: list[str] = []
        try:
            if read_only:
                uri = f"{path.resolve().as_uri()}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, timeout=busy_timeout, check_same_thread=False)
            else:
                make_folder(path.parent)
                self._db = sqlite3.connect(
                    path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
                )
                self._db.execute(_SCHEMA)
            columns = self._columns(read_only)
        except (sqlite3.Error, OSError) as exc:
            raise OutputCacheError(f"{path}: cannot keep produced outputs here ({exc})") from None
        # no table (a replay of a verdict-only file): every output a miss; another table: said once
        self._readable = columns in (_COLUMNS, _COLUMNS + _LATER_COLUMNS)
        self._writable = columns == _COLUMNS + _LATER_COLUMNS
        self._answered = "answered_by" if "answered_by" in columns else "NULL"
        if columns and not self._readable:
            self._damaged(
                f"its outputs table has the columns {', '.join(columns)}, not "
                f"{', '.join(_COLUMNS + _LATER_COLUMNS)}: "
                "no produced output is read from it or kept in it (delete the table or the file)"
            )

    def _columns(self, read_only: bool) -> tuple[str, ...]:
        """The outputs table's columns, a table of an earlier version upgraded when writable."""
        columns = tuple(row[1] for row in self._db.execute("PRAGMA table_info(outputs)").fetchall())
        if not read_only and columns == _COLUMNS:
            for column in _LATER_COLUMNS:
                with contextlib.suppress(sqlite3.OperationalError):  # another process added it first
                    self._db.execute(f"ALTER TABLE outputs ADD COLUMN {column} TEXT")
            columns = tuple(row[1] for row in self._db.execute("PRAGMA table_info(outputs)").fetchall())
        return columns

    def _damaged(self, what: str) -> None:
        """Damage met: every damaged entry is a miss, and the first is said in one warning line."""
        if not self._warned:
            self._warned = True
            warn_damaged(self.path, what)

    def get(self, key: str) -> StoredOutput | None:
        """The output stored under ``key``; None for a miss, or an entry that cannot be read back."""
        if not self._readable:
            return None
        columns = f"output, input_tokens, output_tokens, latency, {self._answered}"
        query = f"SELECT {columns} FROM outputs WHERE key = ?"
        try:
            with self._lock:
                row = self._db.execute(query, (key,)).fetchone()
            return None if row is None else _stored(row)
        except (sqlite3.DatabaseError, ValueError, TypeError, RecursionError) as exc:
            self._damaged(
                f"damaged produced-output entry {key[:12]} ({exc}): read as a miss, its task runs "
                "again; further damaged entries are not reported"
            )
            return None

    def output_history(self, benchmark: str, task: str) -> list[int]:
        """The output tokens of each stored answer of ``task`` on ``benchmark``'s cases."""
        if not self._readable:
            return []
        query = (
            "SELECT output_tokens FROM outputs WHERE benchmark = ? AND task = ? AND output_tokens > 0 "
            "AND typeof(output_tokens) = 'integer'"  # a damaged count is no history
        )
        try:
            with self._lock:
                rows = self._db.execute(query, (benchmark, task)).fetchall()
        except sqlite3.DatabaseError:
            return []
        return [int(tokens) for (tokens,) in rows]

    def put(self, key: str, task: str, benchmark: str, case_id: str, stored: StoredOutput) -> None:
        """Keep an output; a failed write is reported at the end of the run, never raised."""
        if not self._writable:
            return  # another program's table: said when the cache was opened
        row = (
            key,
            task,
            benchmark,
            case_id,
            json.dumps(stored.output, sort_keys=True),
            stored.input_tokens,
            stored.output_tokens,
            stored.latency,
            time.time(),
            None if stored.answered_by is None else json.dumps(stored.answered_by, sort_keys=True),
        )
        try:
            with self._lock:
                self._db.execute("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.Error as exc:
            self.write_errors.append(f"{self.path}: output of {benchmark}::{case_id} not kept ({exc})")

    def close(self) -> None:
        with self._lock:
            self._db.close()
