"""Per-case records: what one case item reported (they travel in pytest reports, also from xdist
workers, as plain dicts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CaseRecord:
    """What one case item reported (travels in pytest reports, also across xdist workers)."""

    benchmark: str
    case: str
    result: str  # pass | fail | error | skip
    nodeid: str = ""
    label: str = ""
    threshold: float | None = None
    criticality: str = "threshold_gate"
    weight: float = 1.0
    parent_rubric: str | None = None
    location: str = ""
    uncertain: bool = False
    reason: str = ""
    score: float | None = None
    model: str = ""
    prompt_hash: str = ""
    cached: bool = False
    attempts: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseRecord:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
