"""The review file: cases a judge marked uncertain, for a human to decide."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..gating.records import CaseRecord


def write_review_file(path: Path, records: Sequence[CaseRecord]) -> list[CaseRecord]:
    """Update the JSON list of cases needing human review (uncertain verdicts); returns this run's.

    Merged by node id: the cases of this run replace their own entries (added when uncertain,
    removed when decided), entries of cases this run did not judge (``-k``, ``--lf``, one file)
    stay. A file that does not read as a review file is replaced.
    """
    review = [r for r in records if r.uncertain]
    ran = {r.nodeid for r in records}
    kept = [entry for entry in _entries(path) if entry.get("nodeid") not in ran]
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"cases": [*kept, *(asdict(r) for r in review)]}
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return review


def _entries(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    cases = data.get("cases") if isinstance(data, dict) else None
    return [c for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []
