"""Content-addressed verdict cache in SQLite: an unchanged request never reaches the model twice.

A verdict is stored under the digest of everything that decides it: the compiled request, the
model name, the model settings and ``CACHE_FORMAT``. Only verdicts are stored, never errors.
Each also carries its request key (the same digest with no model name), so a replay run that
names no judge finds a request's verdict whichever judge gave it (``get_unnamed``).

Writes are transactions in WAL mode, so several processes (pytest-xdist workers) share a file
safely and a process killed mid-run leaves every committed verdict readable and nothing
half-written. A run writes its verdicts in small batches (``batch``): killed, it loses at most
the verdicts of its last half second. Opened ``read_only`` (replay, ``llmjudge cache stats``) a
cache is never written, so a read-only file or folder (a mounted CI artifact) serves.
Knows nothing of pytest.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..judging.pairwise_verdict import PairwiseVerdict
from ..judging.verdict import Usage, Verdict
from ..models.answered import Answered
from ..suite.cache_damage import count, warn_damaged
from ..suite.hashing import digest
from ..suite.nesting import json_too_deep
from ..suite.safe_write import make_folder
from .cache_schema import CACHE_FORMAT as CACHE_FORMAT
from .cache_schema import CacheError as CacheError
from .cache_schema import connect_read_only, has_column, has_request_keys, prepare

SECONDS_PER_DAY = 86_400.0

_INSERT = (
    "INSERT OR REPLACE INTO verdicts (key, model, benchmark, case_id, verdict, input_tokens, "
    "output_tokens, created, used, request_key, request_chars, answered_by) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_KEYS_PER_QUERY = 500  # below SQLite's oldest limit on bound parameters (999)

# Settings that change how long a call may take, not what the judge answers.
_TRANSPORT_SETTINGS = frozenset({"timeout", "max_retries"})


def cache_key(request_digest: str, model_name: str, settings: Mapping[str, Any], sample: int = 0) -> str:
    """The key of a verdict: request, model, answer-relevant settings and cache format; repeated
    samples of a case (``sample`` > 0) each have their own (sample 0 keeps the single-sample key)."""
    relevant = {k: v for k, v in sorted(settings.items()) if k not in _TRANSPORT_SETTINGS}
    key: dict[str, Any] = {"format": CACHE_FORMAT, "request": request_digest, "model": model_name}
    key["settings"] = relevant
    if sample:
        key["sample"] = sample
    return digest(key)


@dataclass(frozen=True)
class CachedVerdict:
    verdict: Verdict | PairwiseVerdict  # a pairwise request's digest never equals a single one's
    model: str
    input_tokens: int = 0  # what the call that gave it used (a hit saves that much)
    output_tokens: int = 0


def _answer(text: object) -> Verdict | PairwiseVerdict:
    """A stored verdict of either shape (each refuses the other's JSON); ``TypeError`` or
    ``ValueError`` if neither."""
    if not isinstance(text, str):
        raise TypeError("the verdict is not JSON text")
    if json_too_deep(text) is not None:
        raise ValueError("the verdict is nested too deeply")
    data = json.loads(text)
    try:
        return Verdict.from_json(data)
    except TypeError:
        return PairwiseVerdict.from_json(data)


def _answered_by(text: object) -> Answered | None:
    """Who answered a stored verdict (null: a verdict stored before it was recorded)."""
    if text is None:
        return None
    if not isinstance(text, str) or json_too_deep(text) is not None:
        raise TypeError("answered_by is not JSON text")
    return Answered.from_json(json.loads(text))


def _cached(
    data: object, model: object, tokens_in: object, tokens_out: object, answered: object = None
) -> CachedVerdict:
    """A stored row as a verdict; ``TypeError`` or ``ValueError`` naming what is damaged."""
    if not isinstance(model, str):
        raise TypeError(f"model is {model!r}, not a name")
    answer = replace(_answer(data), answered=_answered_by(answered))
    return CachedVerdict(answer, model, count(tokens_in, "input_tokens"), count(tokens_out, "output_tokens"))


@dataclass(frozen=True)
class CacheStats:
    path: str
    entries: int
    size: int
    oldest: float | None
    newest: float | None
    models: tuple[tuple[str, int], ...]
    benchmarks: int
    input_tokens: int
    output_tokens: int


class VerdictCache:
    """One connection to a cache file, usable from any thread (calls are serialised)."""

    def __init__(
        self,
        path: Path,
        *,
        create: bool = True,
        read_only: bool = False,
        busy_timeout: float = 30.0,
        batch: int = 1,
        batch_seconds: float = 0.5,
    ) -> None:
        """``batch`` > 1 writes verdicts in transactions of up to that many, each at most
        ``batch_seconds`` after its first verdict arrived (and the rest on ``close``):
        a commit costs five times an insert, and a run's verdicts arrive in bursts.

        ``read_only`` never writes to the file (SQLite may keep ``-shm``/``-wal`` files beside it:
        ``connect_read_only``): ``put`` stores nothing, ``close`` records no entry as used."""
        self.path = path
        self.read_only = read_only
        self._batch = batch
        self._batch_seconds = batch_seconds
        self._pending: list[tuple[Any, ...]] = []
        self._pending_since = 0.0
        self._timer: threading.Timer | None = None
        if create and not read_only:
            try:
                make_folder(path.parent)
            except OSError as exc:  # a file named like its folder (``.llmjudge``)
                raise CacheError(f"{path}: cannot make its folder: {exc}") from None
        elif not path.is_file():
            raise CacheError(f"{path}: no verdict cache here")
        self._lock = threading.Lock()
        self._touched: set[str] = set()
        self._closed = False
        self._warned = False
        self.write_errors: list[str] = []
        try:
            if read_only:
                self._db = connect_read_only(path, busy_timeout)
            else:
                self._db = sqlite3.connect(
                    path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
                )
                prepare(self._db, path, time.monotonic() + busy_timeout)
            self._request_keys = has_request_keys(self._db)  # not in a file older than them, read-only
            self.request_chars = has_column(self._db, "request_chars")  # not in older files, read-only
            self._answered = "answered_by" if has_column(self._db, "answered_by") else "NULL"
        except sqlite3.DatabaseError as exc:
            raise self._unusable(exc) from None

    def _unusable(self, exc: BaseException) -> CacheError:
        return CacheError(f"{self.path}: not a usable verdict cache ({exc})")

    def _damaged(self, key: str, exc: Exception) -> None:
        """An entry this version cannot read is a miss (the next write replaces it), said once."""
        if not self._warned:
            self._warned = True
            what = f"damaged verdict cache entry {key[:12]} ({exc}): read as a miss, judged again"
            warn_damaged(self.path, what + "; further damaged entries are not reported")

    def get(self, key: str) -> CachedVerdict | None:
        """The verdict stored under ``key``; a hit is remembered as used (written on ``close``)."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedVerdict]:
        """The verdicts stored under any of ``keys``, in a few queries; hits are remembered as used."""
        rows: list[tuple[Any, ...]] = []  # as stored: checked by ``_cached``
        with self._lock:
            for start in range(0, len(keys), _KEYS_PER_QUERY):
                chunk = keys[start : start + _KEYS_PER_QUERY]
                marks = ",".join("?" * len(chunk))
                query = (
                    f"SELECT key, verdict, model, input_tokens, output_tokens, {self._answered} "
                    f"FROM verdicts WHERE key IN ({marks})"
                )
                try:
                    rows += self._db.execute(query, chunk).fetchall()
                except sqlite3.DatabaseError as exc:  # damage quick_check did not see
                    raise self._unusable(exc) from None
        found: dict[str, CachedVerdict] = {}
        for key, data, model, tokens_in, tokens_out, answered in rows:
            try:
                found[key] = _cached(data, model, tokens_in, tokens_out, answered)
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                self._damaged(key, exc)
        with self._lock:
            self._touched.update(found)
        return found

    def get_unnamed(self, request_keys: Sequence[str]) -> dict[str, list[CachedVerdict]]:
        """Every verdict stored under any of ``request_keys`` (requests looked up without a model
        name), one per judge that answered, in judge order; hits are remembered as used."""
        rows: list[tuple[Any, ...]] = []
        with self._lock:
            for start in range(0, len(request_keys) if self._request_keys else 0, _KEYS_PER_QUERY):
                chunk = request_keys[start : start + _KEYS_PER_QUERY]
                marks = ",".join("?" * len(chunk))
                query = (
                    f"SELECT request_key, key, verdict, model, {self._answered} FROM verdicts "
                    f"WHERE request_key IN ({marks}) ORDER BY model"
                )
                try:
                    rows += self._db.execute(query, chunk).fetchall()
                except sqlite3.DatabaseError as exc:
                    raise self._unusable(exc) from None
        found: dict[str, list[CachedVerdict]] = {}
        used = set()
        for request_key, key, data, model, answered in rows:
            try:
                cached = _cached(data, model, 0, 0, answered)
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                self._damaged(key, exc)
                continue
            found.setdefault(request_key, []).append(cached)
            used.add(key)
        with self._lock:
            self._touched.update(used)
        return found

    def put(
        self,
        key: str,
        verdict: Verdict | PairwiseVerdict,
        model: str,
        usage: Usage,
        benchmark: str,
        case_id: str,
        request_key: str | None = None,
    ) -> bool:
        """Store a verdict under ``key`` in an atomic transaction (last writer wins).

        A write that fails (disk full, a lock held past the busy timeout) costs a future cache
        hit, never the verdict: it is recorded in ``write_errors``, and ``False`` is returned
        when the write was not deferred to a batch. A read-only cache stores nothing.
        """
        if self.read_only:
            return False
        now = time.time()
        row = (
            key,
            model,
            benchmark,
            case_id,
            json.dumps(verdict.to_json()),
            usage.input_tokens,
            usage.output_tokens,
            now,
            now,
            request_key,
            usage.request_chars or None,
            None if verdict.answered is None else json.dumps(verdict.answered.to_json()),
        )
        with self._lock:
            if not self._pending:
                self._pending_since = time.monotonic()
            self._pending.append(row)
            due = len(self._pending) >= self._batch
            due = due or time.monotonic() - self._pending_since >= self._batch_seconds
            if due:
                return self._write_pending()
            if self._timer is None:
                # written batch_seconds after its first verdict at the latest: a killed run loses that
                self._timer = threading.Timer(self._batch_seconds, self._write_due)
                self._timer.daemon = True
                self._timer.start()
            return True

    def _write_due(self) -> None:
        with self._lock:
            self._timer = None
            if self._pending and not self._closed:
                self._write_pending()

    def _write_pending(self) -> bool:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        rows, self._pending = self._pending, []
        if not rows:
            return True
        try:
            if len(rows) == 1:
                self._db.execute(_INSERT, rows[0])
            else:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(_INSERT, rows)
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            self.write_errors += [f"{row[2]}::{row[3]}: {exc}" for row in rows]
            return False
        return True

    def rows(self, query: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a read-only ``query`` (``cost.spending``'s token history)."""
        with self._lock:
            try:
                return list(self._db.execute(query, parameters).fetchall())
            except sqlite3.DatabaseError as exc:
                raise self._unusable(exc) from None

    def stats(self) -> CacheStats:
        ((entries, oldest, newest, benchmarks, tokens_in, tokens_out),) = self.rows(
            "SELECT COUNT(*), MIN(used), MAX(used), COUNT(DISTINCT benchmark), "
            "TOTAL(input_tokens), TOTAL(output_tokens) FROM verdicts"
        )
        models = self.rows(
            "SELECT model, COUNT(*) FROM verdicts GROUP BY model ORDER BY COUNT(*) DESC, model"
        )
        size = sum(p.stat().st_size for p in _files(self.path) if p.exists())
        counts = (benchmarks, int(tokens_in), int(tokens_out))
        return CacheStats(str(self.path), entries, size, oldest, newest, tuple(models), *counts)

    def prune(self, older_than_days: float, now: float | None = None) -> int:
        """Delete entries not used for ``older_than_days`` days; returns how many went."""
        cutoff = (time.time() if now is None else now) - older_than_days * SECONDS_PER_DAY
        try:
            with self._lock:
                removed = self._db.execute("DELETE FROM verdicts WHERE used < ?", (cutoff,)).rowcount
            if removed:
                with self._lock:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    self._db.execute("VACUUM")
        except sqlite3.DatabaseError as exc:
            raise self._unusable(exc) from None
        return int(removed)

    def close(self) -> None:
        """Write pending verdicts, record which entries this run used, close the connection."""
        with self._lock:
            self._write_pending()
            if self._touched and not self.read_only:
                now = time.time()
                try:
                    self._db.execute("BEGIN IMMEDIATE")
                    self._db.executemany(
                        "UPDATE verdicts SET used = ? WHERE key = ?",
                        [(now, k) for k in sorted(self._touched)],
                    )
                    self._db.execute("COMMIT")
                except sqlite3.Error as exc:  # only prune's notion of "recently used" is lost
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    self.write_errors.append(f"marking {len(self._touched)} entries as used: {exc}")
                self._touched.clear()
            self._closed = True
            self._db.close()


def token_history(cache: VerdictCache, model: str) -> list[tuple[int, int]]:
    """``(request characters, input tokens)`` of ``model``'s stored calls that recorded both: its
    characters per token (``cost.tokens.chars_per_token``)."""
    if not cache.request_chars:
        return []
    query = (
        "SELECT request_chars, input_tokens FROM verdicts "
        "WHERE model = ? AND request_chars > 0 AND input_tokens > 0 "
        "AND typeof(request_chars) = 'integer' AND typeof(input_tokens) = 'integer'"  # not damaged
    )
    return [(int(chars), int(tokens)) for chars, tokens in cache.rows(query, (model,))]


def output_history(cache: VerdictCache, benchmark: str, model: str) -> list[int]:
    """The output tokens of each stored call of ``model`` on ``benchmark``'s cases."""
    query = (
        "SELECT output_tokens FROM verdicts WHERE benchmark = ? AND model = ? AND output_tokens > 0 "
        "AND typeof(output_tokens) = 'integer'"
    )
    return [int(tokens) for (tokens,) in cache.rows(query, (benchmark, model))]


def _files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
