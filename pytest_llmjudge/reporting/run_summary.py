"""Summary lines of release statistics: pass-rate intervals and the baseline comparison, shared
by the terminal summary and ``llmjudge show`` / ``llmjudge compare``. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..gating.gates import BenchmarkGate
    from ..gating.statistics import Comparison

LOW_EVIDENCE = 20


_RULE_NOTES = {
    "lower_bound": ", gate on the lower bound",
    "corrected": ", gate on the calibration-corrected rate",
    "corrected_lower_bound": ", gate on the lower bound of the calibration-corrected rate",
}


def interval_line(
    code: str, rate: float | None, low: float | None, high: float | None, n: int, rule: str, samples: int = 0
) -> str:
    """One benchmark's pass rate and interval, both over ``n`` case verdicts; ``samples``: the
    judge samples they were reduced from, when a case had more than one."""
    if rate is None or low is None or high is None:
        return f"  {code}: no verdicts"
    over = (
        f" of {n} case verdicts ({samples} samples reduced per case)" if samples > n else f" of {n} verdicts"
    )
    evidence = ", low evidence" if n < LOW_EVIDENCE else ""
    gate = _RULE_NOTES.get(rule, "")
    return f"  {code}: pass rate {rate:.1%}{over}, 95% interval {low:.1%}–{high:.1%}{evidence}{gate}"


def interval_lines(gates: Sequence[BenchmarkGate]) -> list[str]:
    """Each gate's pass rate with the interval it carries (over its case verdicts)."""
    lines = ["pass rates with 95% intervals:"]
    for g in gates:
        i = g.interval
        if i is None:
            lines.append(interval_line(g.code, None, None, None, 0, g.gate_rule))
            continue
        lines.append(interval_line(g.code, i.rate, i.low, i.high, i.n_cases, g.gate_rule, i.n_samples))
    return lines


def comparison_table(comparisons: Iterable[Comparison | dict[str, Any]]) -> list[str]:
    """The baseline comparison, one row per benchmark (``Comparison`` or its results-file dict)."""
    rows = [c if isinstance(c, dict) else c.to_dict() for c in comparisons]
    lines = ["baseline comparison (paired by case id; exact McNemar, Holm-adjusted):"]
    header = (
        f"  {'benchmark':<16} {'baseline':>8} {'now':>8} {'b':>3} {'c':>3} {'p adj':>7} {'MDE':>6}  verdict"
    )
    lines.append(header)
    for c in rows:
        mde = "-" if c["mde"] is None else f"{c['mde']:.1%}"
        lines.append(
            f"  {c['benchmark']:<16} {_pct(c['baseline_pass_rate']):>8} {_pct(c['candidate_pass_rate']):>8} "
            f"{c['b']:>3} {c['c']:>3} {_p(c['p_adjusted']):>7} {mde:>6}  {c['verdict']}"
        )
        unpaired = c["unpaired"]
        if unpaired["baseline_only"] or unpaired["candidate_only"]:
            lines.append(
                f"    unpaired: {len(unpaired['baseline_only'])} only in the baseline, "
                f"{len(unpaired['candidate_only'])} only now"
            )
    if not rows:
        lines.append("  no benchmark of this run is in the baseline")
    return lines


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"  # a results file may hold null (no test made)
