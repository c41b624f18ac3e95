"""How a rubric edit changed the judge's agreement with the human labels: the table ``llmjudge
compare`` prints and the rows the HTML report shows. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..gating.label_agreement import LabelChange, LabelComparison, accuracy
from .summary import shorten

TITLE = "agreement with the human labels (paired by case; exact McNemar on right/wrong, Holm-adjusted):"
_HEADER = (
    "benchmark",
    "labels",
    "TPR",
    "TNR",
    "kappa",
    "agreement",
    "right→wrong",
    "wrong→right",
    "p",
    "p adj",
)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _arrow(before: float | None, after: float | None) -> str:
    return f"{_rate(before)} → {_rate(after)}"


def p_text(value: float) -> str:
    """An exact p-value as it is: ``0.0625``, ``1``, ``3.05e-05``."""
    return f"{value:.4g}"


def agreement_row(c: LabelComparison) -> dict[str, str]:
    """One benchmark's figures as text, before → after (the terminal's and the report's)."""
    return {
        "benchmark": c.benchmark,
        "labels": str(c.n_paired) + (f" (+{c.unpaired} unpaired)" if c.unpaired else ""),
        "TPR": _arrow(c.before.tpr, c.after.tpr),
        "TNR": _arrow(c.before.tnr, c.after.tnr),
        "kappa": _arrow(c.before.kappa, c.after.kappa),
        "agreement": _arrow(accuracy(c.before), accuracy(c.after)),
        "right→wrong": str(c.turned_wrong),
        "wrong→right": str(c.turned_right),
        "p": p_text(c.p_value),
        "p adj": p_text(c.p_adjusted),
        "verdict": c.verdict,
    }


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


def change_lines(code: str, change: LabelChange) -> list[str]:
    """A changed case: where, its label, both verdicts, and the judge's old and new reasons."""
    return [
        f"  {code}::{change.case} at {change.location} (human {_word(change.human_pass)}): "
        f"judge {_word(change.before.judge_pass)} → {_word(change.after.judge_pass)}",
        f"    before: {shorten(change.before.reason)}",
        f"    after:  {shorten(change.after.reason)}",
    ]


def agreement_lines(comparisons: Sequence[LabelComparison]) -> list[str]:
    """The table, one row per benchmark with its verdict, then the cases that changed."""
    if not comparisons:
        return []
    rows = [_HEADER, *(tuple(agreement_row(c)[k] for k in _HEADER) for c in comparisons)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER))]
    lines = [TITLE]
    for row, comparison in zip(rows, [None, *comparisons], strict=True):
        cells = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        lines.append(f"  {cells}  {comparison.verdict if comparison else 'verdict'}")
    for title, right in (("now wrong (right before)", False), ("now right (wrong before)", True)):
        changed = [(c.benchmark, ch) for c in comparisons for ch in c.changes if ch.turned_right is right]
        lines += ["", f"labelled cases {title}: {len(changed)}"]
        for code, change in changed:
            lines += change_lines(code, change)
    return lines


def report_rows(comparisons: Sequence[LabelComparison]) -> list[dict[str, Any]]:
    """The report's rows: each benchmark's figures and its changed cases, reasons whole."""
    return [
        {
            **agreement_row(c),
            "changes": [
                {
                    "case": ch.case,
                    "location": ch.location,
                    "label": _word(ch.human_pass),
                    "before": _word(ch.before.judge_pass),
                    "after": _word(ch.after.judge_pass),
                    "before_reason": ch.before.reason,
                    "after_reason": ch.after.reason,
                    "turned": "wrong → right" if ch.turned_right else "right → wrong",
                }
                for ch in c.changes
            ],
        }
        for c in comparisons
    ]
