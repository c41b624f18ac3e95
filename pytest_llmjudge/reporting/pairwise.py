"""Pairwise mode in the run's outputs: a lost case's failure report, the summary's pairwise table,
and the outputs a baseline results file recorded. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .failures import FailureReport
from .summary import shorten

if TYPE_CHECKING:
    from ..gating.pairwise_stats import PairwiseFigures
    from ..gating.records import CaseRecord
    from ..pipeline.pairwise_pipeline import PairResult
    from ..suite.files import Benchmark, Case

_SIDE = {"A": "B", "B": "A"}


def answer_line(position: str, winner: str | None, reason: str) -> str:
    """``candidate was A: B won (the baseline) — reason``."""
    if winner is None:
        said = "no answer"
    elif winner == "tie":
        said = "tie"
    else:
        said = f"{winner} won ({'the candidate' if winner == position else 'the baseline'})"
    return f"candidate was {position}: {said} — {reason}"


def _shown(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, sort_keys=True)


def loss_report(benchmark: Benchmark, case: Case, result: PairResult) -> FailureReport:
    """The report of a case whose output lost to the baseline's: both orders' answers."""
    title = f"{benchmark.code} · {benchmark.spec.label}" if benchmark.spec.label else benchmark.code
    source = result.baseline.source if result.baseline else "?"
    lines = [
        title,
        f"case {case.id} at {case.location.path}:{case.location.line}",
        f"pairwise: LOSS against the baseline output (from the {source})",
    ]
    if result.panel is not None:
        lines[-1] += f", by the panel's vote ({result.panel.rule})"
    reasons = []
    judges = result.members or (result,)  # a panel: each member's outcome, then its answers
    for judge in judges:
        indent = ""
        if result.panel is not None:
            shown = judge.outcome or f"ERROR {judge.failure}"
            lines.append(f"{judge.model}: {shown}")
            indent = "  "
        for order in judge.orders if judge.failure is None else ():
            answer = order.answer
            reason = answer.reason if answer else ""
            reasons.append(reason)
            position = order.request.candidate_position
            lines.append(indent + answer_line(position, answer.winner if answer else None, reason))
    lines += [f"candidate output: {_shown(result.candidate_output)}"]
    if result.baseline is not None:
        lines.append(f"baseline output: {_shown(result.baseline.output)}")
    digests = ", ".join(dict.fromkeys(o.request.digest[:12] for o in result.orders))
    cached = all(s.cached for o in result.orders for s in o.samples)
    lines.append(f"model: {result.model or '?'}   prompts: {digests}" + ("   (cached)" if cached else ""))
    text = "\n".join(lines)
    short = "\n".join(
        shorten(line) if line.startswith(("candidate ", "baseline output")) else line for line in lines
    )
    said = " / ".join(r for r in reasons if r)
    if result.panel is not None:  # the vote, not the first member's reason
        named = [m.outcome or "ERROR" for m in result.members]
        said = f"panel ({result.panel.rule}): " + ", ".join(
            f"{named.count(o)} {o}" for o in dict.fromkeys(named)
        )
    return FailureReport(text, short, shorten("LOSS to the baseline: " + said))


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def pairwise_table(figures: Sequence[PairwiseFigures]) -> list[str]:
    """The summary's pairwise table: one row per pairwise benchmark."""
    rows = []
    for f in figures:
        low, high = f.win_rate_ci
        rate = "-" if f.win_rate is None else f"{_pct(f.win_rate)} [{_pct(low)}–{_pct(high)}]"
        consistent = f.position_consistency
        consistency = "-" if consistent is None else f"{_pct(consistent)} ({f.judged})"
        rows.append(
            [
                f.benchmark,
                f"{f.wins}/{f.ties}/{f.losses}/{f.inconsistent}",
                rate,
                f"{f.p_adjusted:.3g}",
                f.verdict,
                consistency,
                str(f.unpaired),
            ]
        )
    header = ["benchmark", "W/T/L/I", "win rate [95% CI]", "p (Holm)", "verdict", "consistency (pairs)"]
    title = "pairwise comparison with the baseline (ties and inconsistent pairs count as half a win):"
    return [title, *_table([*header, "unpaired"], rows), *position_lines(figures)]


def position_lines(figures: Sequence[PairwiseFigures]) -> list[str]:
    """A line for each benchmark whose judge mostly named one position, whatever the outputs."""
    lines = []
    for f in figures:
        picked = f.picked_position
        if picked is not None:
            position, named, answers = picked
            lines.append(
                f"{f.benchmark}: the judge mostly picks one position: it named {position} in {named} of "
                f"{answers} answers, whichever output stood there (position consistency "
                f"{_pct(f.position_consistency)})"
            )
    return lines


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(c) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), line(["-" * w for w in widths]), *[line(r) for r in rows]]


def recorded_cases(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each benchmark's release cases in a results file (code → case id → its recorded output, or
    ``NO_OUTPUT`` when the file holds none: format 1, or a task that gave none)."""
    return {
        b["code"]: {
            c["id"]: NO_OUTPUT if c.get("produced") is None else c["produced"]["output"]
            for c in b["cases"]
            if not c["calibration"]
        }
        for b in results["benchmarks"]
    }


class _NoOutput:
    def __repr__(self) -> str:
        return "NO_OUTPUT"


NO_OUTPUT: Any = _NoOutput()


def figures_of_results(results: Mapping[str, Any], *, margin: float, alpha: float) -> list[PairwiseFigures]:
    """The pairwise figures of a results file, recomputed from its cases' outcomes (no judge), so
    another margin or alpha can be applied."""
    from ..gating.pairwise_stats import pairwise_figures, position_counts

    outcomes: dict[str, list[str]] = {}
    unpaired: dict[str, int] = {}
    consistent: dict[str, list[bool]] = {}
    positions: dict[str, tuple[int, int, int]] = {}
    for b in results["benchmarks"]:
        pairs = [c["pairwise"] for c in b["cases"] if c.get("pairwise") and not c["calibration"]]
        if not pairs and not b.get("pairwise"):
            continue
        code = b["code"]
        outcomes[code] = [p["outcome"] for p in pairs if p["outcome"] is not None]
        recorded = (b.get("pairwise") or {}).get("unpaired_cases", {})
        unpaired[code] = sum(1 for p in pairs if p["unpaired"]) + len(recorded.get("baseline_only", []))
        consistent[code] = [p["consistent"] for p in pairs if p["consistent"] is not None]
        judged = [a["winner"] for p in pairs if p["consistent"] is not None for a in p["answers"]]
        positions[code] = position_counts(judged)
    return pairwise_figures(
        outcomes, unpaired, consistent=consistent, positions=positions, margin=margin, alpha=alpha
    )


def add_pairwise(
    benchmarks: list[dict[str, Any]],
    figures: Sequence[PairwiseFigures],
    records: Mapping[str, Sequence[CaseRecord]],
) -> None:
    """Each results-file benchmark's ``pairwise`` figures (null when it was not judged pairwise)."""
    by_code = {f.benchmark: f for f in figures}
    for benchmark in benchmarks:
        found = by_code.get(benchmark["code"])
        benchmark["pairwise"] = (
            None if found is None else _benchmark_pairwise(found, records[found.benchmark])
        )


def _benchmark_pairwise(figures: PairwiseFigures, records: Sequence[CaseRecord]) -> dict[str, Any]:
    from ..gating.pairwise_gates import DEFAULT_MIN_CONSISTENCY

    pairs = [(r.case, r.pairwise) for r in records if r.pairwise is not None and not r.calibration]
    first = pairs[0][1] if pairs else None
    data = figures.to_dict()
    del data["benchmark"]
    del data["positions"]  # recomputed from the answers the file keeps (``figures_of_results``)
    data["gate"] = first.gate if first else None
    own = first.min_consistency if first else None
    data["min_consistency"] = DEFAULT_MIN_CONSISTENCY if own is None else own  # the one applied
    data["unpaired_cases"] = {
        "baseline_only": list(first.baseline_only) if first else [],
        "candidate_only": [case for case, pair in pairs if pair.unpaired],
    }
    return data


def _text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, indent=2, ensure_ascii=False)


def pairwise_case(case: Mapping[str, Any]) -> dict[str, Any] | None:
    """A pairwise case as the HTML report shows it: both outputs, both judgments, and the outcome
    words its filter matches (``tie`` and ``identical`` for identical outputs)."""
    pair = case.get("pairwise")
    if not pair:
        return None
    if pair["unpaired"]:
        kinds = ["unpaired"]
    elif pair["identical"]:
        kinds = ["tie", "identical"]
    else:
        kinds = [pair["outcome"] or "error"]
    produced = case.get("produced")
    members = [m["model"] for m in (case.get("panel") or {}).get("members", [])]
    if len(pair["answers"]) != 2 * len(members):  # a panel's: each member's two, member by member
        members = []
    return {
        "kinds": kinds,
        "outcome": kinds[-1],
        "candidate": None if produced is None else _text(produced["output"]),
        "baseline": None if pair["baseline_source"] is None else _text(pair["baseline_output"]),
        "baseline_source": pair["baseline_source"],
        "consistent": pair["consistent"],
        "answers": [
            {
                "line": (f"{members[i // 2]}: " if members else "")
                + answer_line(a["candidate_position"], a["winner"], a["reason"]),
                "winner": a["winner"],
                "cached": a["cached"],
                "error": a["error"],
            }
            for i, a in enumerate(pair["answers"])
        ],
    }
