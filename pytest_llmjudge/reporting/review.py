"""The review file: cases a judge marked uncertain, for a human to decide."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from ..gating.records import CaseRecord


def write_review_file(path: Path, records: Sequence[CaseRecord]) -> list[CaseRecord]:
    """Write the cases needing human review (uncertain verdicts) as JSON; returns them."""
    review = [r for r in records if r.uncertain]
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"cases": [asdict(r) for r in review]}
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return review
