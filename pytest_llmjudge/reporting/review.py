"""The review file: cases a judge marked uncertain, for a human to decide."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..gating.records import CaseRecord
from ..suite.safe_write import Guard, RefusedTarget, check, locked, write_text

# Far above any review file (a 10,000-case run's, all uncertain, is a few MB); a larger file is
# not read (it could be anything), nor replaced.
MAX_REVIEW_BYTES = 64 * 1024 * 1024


def write_review_file(
    path: Path, records: Sequence[CaseRecord], guard: Guard | None = None
) -> list[CaseRecord]:
    """Update the JSON list of cases needing human review (uncertain verdicts, and the cases a
    panel split on, with every member's reason); returns this run's.

    Merged by node id: the cases of this run replace their own entries (added when uncertain,
    removed when decided), entries of cases this run did not judge (``-k``, ``--lf``, one file)
    stay. A file that does not read as a review file is replaced, unless it is larger than
    ``MAX_REVIEW_BYTES``. Runs sharing the file (parallel shards) merge one at a time, under a
    lock; a failure to write, or a refusal, is an ``OSError``.
    """
    review = [r for r in records if r.needs_review]
    ran = {r.nodeid for r in records}
    check(path, guard)  # before the lock file is made beside it
    with locked(path):
        kept = [entry for entry in _entries(path) if entry.get("nodeid") not in ran]
        payload = {"cases": [*kept, *(asdict(r) for r in review)]}
        write_text(path, json.dumps(payload, indent=2) + "\n", guard=guard)
    return review


def _entries(path: Path) -> list[dict[str, Any]]:
    try:
        raw = _read(path)
    except RefusedTarget:
        raise
    except OSError:  # none yet, or unreadable: replaced
        return []
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return []
    cases = data.get("cases") if isinstance(data, dict) else None
    return [c for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []


def _read(path: Path) -> bytes:
    """The bytes of the review file at ``path``: a regular file, at most ``MAX_REVIEW_BYTES`` read
    (``RefusedTarget`` beyond); opened without waiting, should a FIFO have taken its place."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise RefusedTarget("it is not a regular file")
        data = stream.read(MAX_REVIEW_BYTES + 1)
    if len(data) > MAX_REVIEW_BYTES:
        raise RefusedTarget(f"it is larger than {MAX_REVIEW_BYTES // 2**20} MiB: not a review file")
    return data
