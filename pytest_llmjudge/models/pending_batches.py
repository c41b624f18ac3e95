"""The batch requests a run left waiting, under ``.llmjudge/batches/``: what ``--llmjudge-batch=submit``
records and a later ``collect`` (or ``on``) run collects without submitting them again.

One JSON file per judge request (named by its request's digest and judge), holding a list of
records ``{"batch": ID, "response_id": ID, "response": …}``: the suspended response pydantic-ai
returned when it submitted the request (``response``, as pydantic-ai serializes it), which names
its batch. A repeated case has one record per sample. Plain files and JSON: no pydantic-ai here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..suite.hashing import digest

PENDING_FOLDER = Path(".llmjudge") / "batches"
COLLECT_HINT = "pytest --llmjudge-batch=collect (the same suite and judge)"


@dataclass(frozen=True)
class PendingRecord:
    """One submitted request waiting for its batch."""

    batch: str
    response_id: str
    response: Any  # the suspended response, as pydantic-ai dumps it to JSON


@dataclass(frozen=True)
class PendingStore:
    """The waiting requests of a suite, one file per request key, below ``folder``."""

    folder: Path

    def key(self, request_digest: str, judge: str) -> str:
        return digest({"request": request_digest, "judge": judge})

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def waiting(self, key: str) -> list[PendingRecord]:
        """The records of ``key``; none for a missing or unreadable file (its requests are sent again)."""
        try:
            items = json.loads(self._path(key).read_text(encoding="utf-8"))
            return [PendingRecord(i["batch"], i["response_id"], i["response"]) for i in items]
        except (OSError, ValueError, TypeError, KeyError):
            return []

    def put(self, key: str, record: PendingRecord) -> None:
        self._write(key, [*self.waiting(key), record])

    def remove(self, key: str, response_id: str) -> None:
        self._write(key, [r for r in self.waiting(key) if r.response_id != response_id])

    def _write(self, key: str, records: list[PendingRecord]) -> None:
        path = self._path(key)
        if not records:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        data = [{"batch": r.batch, "response_id": r.response_id, "response": r.response} for r in records]
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temporary, path)  # a run stopped mid-write leaves the old file whole

    def records(self) -> Iterator[PendingRecord]:
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else ():
            yield from self.waiting(path.stem)


def pending_reason(store: PendingStore) -> str | None:
    """``pending: N requests in M batches; collect with …``, or None when nothing waits."""
    records = list(store.records())
    if not records:
        return None
    batches = len({r.batch for r in records})
    requests = f"{len(records)} request{'s' if len(records) != 1 else ''}"
    return (
        f"pending: {requests} in {batches} batch{'es' if batches != 1 else ''}; collect with {COLLECT_HINT}"
    )
