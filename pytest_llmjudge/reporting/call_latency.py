"""The run's judge-call latency: each call's wall time as the plugin saw it, against the time
the judge's server said it spent where it says (``models.server_time``). Their median
difference is what the plugin, the SDKs and the network add to every call, so a regression
there shows in any run's results file (``call_latency``)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..gating.records import CaseRecord


def call_latency(records: Sequence[CaseRecord]) -> dict[str, Any] | None:
    """``calls`` timed in this run (cache hits and code checks make none), their median wall
    time, and, over the calls whose server said what it spent, the median of that and of the
    difference (``overhead_median_s``); None when the run called no judge."""
    walls: list[float] = []
    servers: list[float] = []
    overheads: list[float] = []
    for record in records:
        for sample in record.samples:
            if sample.cached or sample.latency_s is None:
                continue
            walls.append(sample.latency_s)
            if sample.model_latency_s is not None:
                servers.append(sample.model_latency_s)
                overheads.append(sample.latency_s - sample.model_latency_s)
    if not walls:
        return None
    return {
        "calls": len(walls),
        "wall_median_s": round(statistics.median(walls), 6),
        "server_timed": len(servers),
        "server_median_s": round(statistics.median(servers), 6) if servers else None,
        "overhead_median_s": round(statistics.median(overheads), 6) if overheads else None,
    }
