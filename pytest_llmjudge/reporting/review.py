"""The review file: cases a judge marked uncertain, for a human to decide."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..gating.records import CaseRecord
from ..suite.safe_write import Guard, check, locked, write_text


def write_review_file(
    path: Path, records: Sequence[CaseRecord], guard: Guard | None = None
) -> list[CaseRecord]:
    """Update the JSON list of cases needing human review (uncertain verdicts); returns this run's.

    Merged by node id: the cases of this run replace their own entries (added when uncertain,
    removed when decided), entries of cases this run did not judge (``-k``, ``--lf``, one file)
    stay. A file that does not read as a review file is replaced. Runs sharing the file (parallel
    shards) merge one at a time, under a lock; a failure to write is an ``OSError``.
    """
    review = [r for r in records if r.uncertain]
    ran = {r.nodeid for r in records}
    check(path, guard)  # before the lock file is made beside it
    with locked(path):
        kept = [entry for entry in _entries(path) if entry.get("nodeid") not in ran]
        payload = {"cases": [*kept, *(asdict(r) for r in review)]}
        write_text(path, json.dumps(payload, indent=2) + "\n", guard=guard)
    return review


def _entries(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    cases = data.get("cases") if isinstance(data, dict) else None
    return [c for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []
