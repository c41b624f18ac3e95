"""Produced outputs, content-addressed: a table beside the verdicts' in the cache file.

The key is the task's fingerprint with what the task is given for the case, so a rerun with
nothing changed calls no task, and a bumped ``task_version`` or another task model misses.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..suite.hashing import digest

OUTPUT_MODES = ("on", "off", "replay")

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
    created REAL NOT NULL
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


class OutputCache:
    """One connection, usable from any thread (calls are serialised); ``read_only`` for replay."""

    def __init__(self, path: Path, *, read_only: bool = False, busy_timeout: float = 30.0) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.write_errors: list[str] = []
        try:
            if read_only:
                uri = f"{path.resolve().as_uri()}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, timeout=busy_timeout, check_same_thread=False)
                self._readable = self._has_table()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(
                    path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
                )
                self._db.execute(_SCHEMA)
                self._readable = True
        except (sqlite3.Error, OSError) as exc:
            raise OutputCacheError(f"{path}: cannot keep produced outputs here ({exc})") from None

    def _has_table(self) -> bool:
        row = self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='outputs'").fetchone()
        return row is not None

    def get(self, key: str) -> StoredOutput | None:
        if not self._readable:
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT output, input_tokens, output_tokens, latency FROM outputs WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return StoredOutput(json.loads(row[0]), row[1], row[2], row[3])

    def output_history(self, benchmark: str, task: str) -> list[int]:
        """The output tokens of each stored answer of ``task`` on ``benchmark``'s cases."""
        if not self._readable:
            return []
        query = "SELECT output_tokens FROM outputs WHERE benchmark = ? AND task = ? AND output_tokens > 0"
        with self._lock:
            rows = self._db.execute(query, (benchmark, task)).fetchall()
        return [int(tokens) for (tokens,) in rows]

    def put(self, key: str, task: str, benchmark: str, case_id: str, stored: StoredOutput) -> None:
        """Keep an output; a failed write is reported at the end of the run, never raised."""
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
        )
        try:
            with self._lock:
                self._db.execute("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.Error as exc:
            self.write_errors.append(f"{self.path}: output of {benchmark}::{case_id} not kept ({exc})")

    def close(self) -> None:
        with self._lock:
            self._db.close()
