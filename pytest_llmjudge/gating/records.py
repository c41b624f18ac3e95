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
    benchmark_cases: int = 0  # cases of its benchmark as collected: a partial run's gate says so
    retried: tuple[str, ...] = ()  # the failure kind of each retried attempt
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # judge calibration: whether the item is a calibration case (judged, not gated), the judge's
    # own verdict and the benchmark's trust minimums
    calibration: bool = False
    judge_pass: bool | None = None
    min_tpr: float | None = None
    min_tnr: float | None = None
    min_labels: int | None = None
    case_label: str | None = None  # the human label of the case, if any
    flaky: bool = False  # repeated samples disagree
    stability: float | None = None  # share of samples agreeing with the verdict
    samples: tuple[dict[str, Any], ...] = ()  # each judge sample (results-file ``sample`` objects)
    judge: dict[str, Any] | None = None  # model, settings, repeats, reduce, gate rule, instructions
    request: dict[str, str] | None = None  # the case's input, output and expected text
    produced: dict[str, Any] | None = None  # the output judged, and where it came from (a task?)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseRecord:
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["samples"] = tuple(fields.get("samples", ()))
        fields["retried"] = tuple(fields.get("retried", ()))
        return cls(**fields)
