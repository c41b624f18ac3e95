"""The terminal's panel lines: per benchmark judged by a panel, how its members voted and agreed.

panel of P1 (majority, 2 of 3 must answer): 12 cases, 6 split, Fleiss' κ 0.30, effective judges 1.8 of 3
  1. openai:judge-a: passes 66.7 % (8 of 12)
  2. openai:judge-b: passes 50.0 % (6 of 12)
  3. openai:judge-c: passes 66.7 % (8 of 12)
  Cohen's κ: 1–2 0.00, 1–3 1.00, 2–3 0.00
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ..gating.panel_agreement import PanelAgreement
from ..gating.panel_records import PanelRecord, benchmark_agreement, member_calibration
from ..gating.records import CaseRecord


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def agreement_lines(code: str, first: PanelRecord, stats: PanelAgreement) -> list[str]:
    effective = stats.effective_judges
    head = (
        f"panel of {code} ({first.rule}, {first.min_members} of {len(stats.members)} must answer): "
        f"{stats.cases} cases, {stats.split_cases} split, Fleiss' κ {_number(stats.fleiss_kappa)}, "
        f"effective judges {_number(effective, 1)} of {len(stats.members)}"
    )
    lines = [head]
    number = {name: index for index, name in enumerate(stats.members, start=1)}
    for rate in stats.rates:
        share = "n/a" if rate.rate is None else f"{100 * rate.rate:.1f} %"
        errored = f", {rate.errors} errored" if rate.errors else ""
        counts = f"({rate.passes} of {rate.answered}{errored})"
        verb = "wins" if stats.outcomes else "passes"  # pairwise: its share of the candidate's wins
        lines.append(f"  {number[rate.member]}. {rate.member}: {verb} {share} {counts}")
    pairs = ", ".join(f"{number[p.first]}–{number[p.second]} {_number(p.kappa)}" for p in stats.pairs)
    lines.append(f"  Cohen's κ: {pairs}")
    return lines


def calibration_line(labelled: list[tuple[PanelRecord, str]], number: dict[str, int]) -> str:
    """``members against human labels: 1. TPR 0.75 TNR 1.00, …`` (the panel's own TPR/TNR are in
    the calibration table, as a single judge's)."""
    parts = [
        f"{number.get(c.model, '?')}. TPR {_number(c.tpr)} TNR {_number(c.tnr)}"
        for c in member_calibration(labelled)
    ]
    return f"  members against {len(labelled)} human labels: {', '.join(parts)}"


def panel_lines(records: Sequence[CaseRecord]) -> list[str]:
    """The lines of every benchmark a panel judged (none when no panel judged anything):
    agreement over its gated cases, each member against the human labels of its labelled ones."""
    gated: dict[str, list[PanelRecord]] = {}
    labelled: dict[str, list[tuple[PanelRecord, str]]] = {}
    for record in records:
        if record.panel is None:
            continue
        if not record.calibration:
            gated.setdefault(record.benchmark, []).append(record.panel)
        if record.case_label in ("pass", "fail"):
            labelled.setdefault(record.benchmark, []).append((record.panel, record.case_label))
    lines: list[str] = []
    for code in dict.fromkeys([*gated, *labelled]):
        panels = gated.get(code) or [panel for panel, _ in labelled[code]]
        stats = benchmark_agreement(panels)
        if stats is None:
            continue
        lines += agreement_lines(code, panels[0], stats)
        if code in labelled:
            number = {name: index for index, name in enumerate(stats.members, start=1)}
            lines.append(calibration_line(labelled[code], number))
    return lines


def panel_object(records: Sequence[CaseRecord]) -> dict[str, Any] | None:
    """A results-file benchmark's ``panel``: the agreement over its gated cases; None without a panel."""
    stats = benchmark_agreement([r.panel for r in records if r.panel is not None and not r.calibration])
    if stats is None:
        return None
    return {
        "cases": stats.cases,
        "split_cases": stats.split_cases,
        "members": [
            {
                "model": r.member,
                "passes": r.passes,
                "answered": r.answered,
                "errors": r.errors,
                "pass_rate": r.rate,
            }
            for r in stats.rates
        ],
        "pairs": [asdict(pair) for pair in stats.pairs],
        "fleiss_kappa": stats.fleiss_kappa,
        "fleiss_cases": stats.fleiss_cases,
        "mean_correlation": stats.mean_correlation,
        "effective_judges": stats.effective_judges,
    }
