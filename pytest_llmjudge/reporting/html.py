"""The self-contained HTML report of a results file (format 1).

One file with its styles, script and chart inline: it opens from disk with no network. The
header, gate chart and the gate, rubric, comparison and calibration tables are rendered here
(jinja2, autoescaped); the case tables are drawn in the browser from one inline JSON block,
a page of rows at a time, so a run of thousands of cases opens at once. Every string of the
results file is untrusted: it reaches the page only as escaped text, and a Content-Security-Policy
lets only this module's own script and style run.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ..suite.safe_write import Guard, write_text
from .pairwise import pairwise_case
from .results_file import disagrees, judge_models

STATUS_ORDER = ("fail", "error", "untrusted", "partial", "incomplete", "no verdicts", "not scored", "pass")
# Bidirectional overrides and isolates could reorder the text around them (and NUL is invisible):
# untrusted text shows them as visible markers instead.
_INVISIBLE = re.compile("[\x00\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def visible(text: str) -> str:
    """``text`` with NUL and bidirectional control characters as visible ``⟦U+202E⟧`` markers."""
    return _INVISIBLE.sub(lambda m: f"⟦U+{ord(m.group()):04X}⟧", text)


def _displayable(value: Any) -> Any:
    """``value`` with every string made visible and NaN or infinite numbers as unknown (None)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {key: _displayable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_displayable(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def embed_json(value: Any) -> str:
    """JSON that cannot end its ``<script type="application/json">`` block or break a JS parser."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_UNSAFE[m.group()], text)


def percent(value: float | None) -> str:
    """``0.9`` → ``90%``, ``2/3`` → ``66.7%``, ``None`` → ``–``."""
    if value is None:
        return "–"
    text = f"{value * 100:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"


def interval(low: float | None, high: float | None) -> str:
    """``[0.21, 0.94]`` → ``21–94%`` style text, ``–`` when unknown."""
    if low is None or high is None:
        return "–"
    return f"{percent(low)[:-1]}–{percent(high)}"


def points(value: float | None, signed: bool = True) -> str:
    """A difference of rates in percentage points: ``-0.083`` → ``−8.3 pp``."""
    if value is None:
        return "–"
    text = percent(abs(value))[:-1] + " pp"
    if not signed:
        return text
    return ("−" if value < 0 else "+" if value > 0 else "±") + text


def number(value: float | None, digits: int = 3) -> str:
    """A plain number with at most ``digits`` decimals, ``–`` when unknown."""
    if value is None:
        return "–"
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def dollars(value: float | None) -> str:
    """``0.00054`` → ``$0.00054``; ``None`` (a model without a price was called) → ``unknown``."""
    from ..cost.pricing import format_usd

    return "unknown" if value is None else format_usd(value)


def p_value(value: float | None) -> str:
    if value is None:
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def moment(value: str) -> str:
    """``2026-11-23T10:30:00Z`` → ``2026-11-23 10:30:00 UTC``."""
    return f"{datetime.fromisoformat(value):%Y-%m-%d %H:%M:%S} UTC"


def duration(started: str, finished: str) -> str:
    """``1 min 42.5 s`` between two ISO-8601 times."""
    seconds = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)} min {rest:.1f} s" if minutes else f"{rest:.1f} s"


def status_rank(status: str) -> int:
    return STATUS_ORDER.index(status) if status in STATUS_ORDER else len(STATUS_ORDER)


def sorted_benchmarks(benchmarks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Failing gates first, then the others by status, each group by code."""
    return sorted(benchmarks, key=lambda b: (status_rank(b["gate"]["status"]), b["code"]))


def compute_flips(baseline: dict[str, Any], results: dict[str, Any]) -> list[dict[str, str]]:
    """Release cases with a verdict in both runs that changed it, paired by benchmark code and case
    id (``gating.run_verdict.flips_between``, as a run computes them)."""
    from ..gating.run_verdict import flips_between, release_verdicts_of_results

    before, now = release_verdicts_of_results(baseline), release_verdicts_of_results(results)
    return [flip.to_dict() for flip in flips_between(before, now)]


@dataclass(frozen=True)
class ChartRow:
    code: str
    status: str
    y: float
    rate: float | None  # x coordinates from here on
    low: float | None
    high: float | None
    threshold: float | None
    title: str
    value: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: int
    right: int
    row_height: int
    ticks: list[tuple[float, str]]
    rows: list[ChartRow]


def gate_chart(benchmarks: list[dict[str, Any]], width: int = 960, row_height: int = 26) -> Chart:
    """Geometry of the pass-rate chart: one row per benchmark, its interval and threshold."""
    left, right, top = 150, width - 90, 24

    def x(value: float | None) -> float | None:
        return None if value is None else round(left + (right - left) * value, 1)

    rows = []
    for index, b in enumerate(benchmarks):
        gate = b["gate"]
        title = f"{b['code']}: pass rate {percent(gate['pass_rate'])}"
        if gate["ci_low"] is not None:
            title += f", interval {interval(gate['ci_low'], gate['ci_high'])} ({gate['interval_method']})"
        title += f", threshold {percent(b['threshold'])}, {gate['status']}"
        rows.append(
            ChartRow(
                code=b["code"],
                status=gate["status"].replace(" ", "-"),
                y=top + index * row_height,
                rate=x(gate["pass_rate"]),
                low=x(gate["ci_low"]),
                high=x(gate["ci_high"]),
                threshold=x(b["threshold"]),
                title=title,
                value=percent(gate["pass_rate"]),
            )
        )
    ticks = [(x(t / 4) or 0.0, percent(t / 4)) for t in range(5)]
    return Chart(width, top + len(rows) * row_height + 8, left, right, row_height, ticks, rows)


def case_data(results: dict[str, Any]) -> dict[str, Any]:
    """The inline JSON the case tables are drawn from: benchmarks in page order, their cases."""
    benchmarks = []
    for b in sorted_benchmarks(results["benchmarks"]):
        request = b["request"] or {}
        cases = []
        for c in b["cases"]:
            case_request = c["request"] or {}
            cases.append(
                {
                    "id": c["id"],
                    "result": c["result"],
                    "reason": c["reason"],
                    "score": c["score"],
                    "uncertain": c["uncertain"],
                    "flaky": c["flaky"],
                    "stability": c["stability"],
                    "label": c["label"],
                    "disagree": disagrees(c),
                    "location": c["location"],
                    "nodeid": c["nodeid"],
                    "digest": c["request_digest"],
                    "request": None
                    if c["request"] is None
                    else [case_request.get(k, "") for k in _CASE_PARTS],
                    "samples": c["samples"],
                    "produced": _produced(c.get("produced")),
                    "expected": _unfenced(case_request.get("expected") or None),
                    "pairwise": pairwise_case(c),
                    "panel": c.get("panel"),  # a panel's case: each member's verdict
                }
            )
        benchmarks.append(
            {
                "code": b["code"],
                "repeats": b["repeats"],
                "instructions": request.get("instructions"),
                "rubric": request.get("rubric"),
                "cases": cases,
            }
        )
    return {"benchmarks": benchmarks}


_CASE_PARTS = ("input", "output", "expected")


def _produced(produced: dict[str, Any] | None) -> dict[str, Any] | None:
    """The output a case was judged on and where it came from, as the report shows it."""
    if produced is None:
        return None
    source = "from the case file" if produced["source"] == "case file" else produced["source"]
    output = produced["output"]
    text = output if isinstance(output, str) else json.dumps(output, indent=2, ensure_ascii=False)
    if produced.get("task"):
        source += f" · {produced['task']}"
    if produced.get("latency") is not None:
        source += f" · {produced['latency']:.2f} s"
    return {"source": source, "output": text}


def _unfenced(text: str | None) -> str | None:
    """A compiled request's fenced expected output (``{"GROUND_TRUTH": …}``, inert JSON) as the
    author wrote it; any other text as it is."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict) and value.keys() == {"GROUND_TRUTH"}:  # compile.request's fence
        value = value["GROUND_TRUTH"]
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def report_context(results: dict[str, Any], baseline: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything the template shows, with every untrusted string made visible."""
    results = _displayable(results)
    flips = results["flips"]
    if flips is None and baseline is not None:
        flips = compute_flips(_displayable(baseline), results)
    benchmarks = sorted_benchmarks(results["benchmarks"])
    return {
        "r": results,
        "models": judge_models(results),
        "answered": answered_judges(results),
        "task_models": answered_tasks(results),
        "started": moment(results["started"]),
        "duration": duration(results["started"], results["finished"]),
        "benchmarks": benchmarks,
        "chart": gate_chart(benchmarks),
        "calibrated": [b for b in benchmarks if b["calibration"] is not None],
        "comparison": results["comparison"],
        "flips": flips,
        "regressed": [f for f in flips or [] if f["baseline"] == "pass"],
        "recovered": [f for f in flips or [] if f["baseline"] == "fail"],
        "compared": baseline is not None or results["comparison"] is not None or results["flips"] is not None,
        "data": embed_json(case_data(results)),
        "pairwise": [b for b in benchmarks if b.get("pairwise")],
        "label_agreement": label_agreement_rows(_displayable(baseline), results) if baseline else [],
    }


def answered_judges(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The judge identities that answered the run's verdicts (model string asked for, snapshot,
    fingerprint), each once with its verdicts over every benchmark, most verdicts first."""
    counts: dict[tuple[str, str, str | None], int] = {}
    for benchmark in results["benchmarks"]:
        for seen in benchmark.get("judges") or ():
            key = (seen["requested"], seen["model"], seen.get("fingerprint"))
            counts[key] = counts.get(key, 0) + int(seen.get("verdicts") or 0)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    return [
        {"requested": requested, "model": model, "fingerprint": fingerprint, "verdicts": verdicts}
        for (requested, model, fingerprint), verdicts in ordered
    ]


def answered_tasks(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The models that answered the task calls behind the run's outputs (task label, snapshot,
    fingerprint), each once with its outputs, most outputs first."""
    counts: dict[tuple[str, str, str | None], int] = {}
    for benchmark in results["benchmarks"]:
        for case in benchmark["cases"]:
            produced = case.get("produced") or {}
            if answered := produced.get("answered_by"):
                key = (produced.get("task") or "", answered["model"], answered.get("fingerprint"))
                counts[key] = counts.get(key, 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    return [
        {"task": task, "model": model, "fingerprint": fingerprint, "outputs": outputs}
        for (task, model, fingerprint), outputs in ordered
    ]


def label_agreement_rows(baseline: dict[str, Any], results: dict[str, Any]) -> list[dict[str, Any]]:
    """The judge's agreement with the human labels, baseline → this run (both judged labels)."""
    from ..gating.label_agreement import compare_label_results
    from ..gating.statistics import DEFAULT_MARGIN
    from .label_agreement import report_rows

    margin, alpha = results["settings"]["margin"], results["settings"]["alpha"]
    margin = margin if 0 < margin < 1 else DEFAULT_MARGIN  # a run may set 0: no MDE to compare
    return report_rows(compare_label_results(baseline, results, margin=margin, alpha=alpha))


def _asset(name: str) -> str:
    return (resources.files(__package__) / "templates" / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_report(results: dict[str, Any], baseline: dict[str, Any] | None = None) -> str:
    """The report page of ``results`` (a format-1 dict), compared with ``baseline`` if given."""
    from jinja2 import Environment, PackageLoader, StrictUndefined
    from markupsafe import Markup

    environment = Environment(
        loader=PackageLoader(__package__ or "pytest_llmjudge.reporting", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(percent=percent, interval=interval, points=points, number=number, p=p_value)
    environment.filters["usd"] = dollars
    script, style = _asset("report.js"), _asset("report.css")
    csp = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    context = report_context(results, baseline)
    context["data"] = Markup(context["data"])
    return environment.get_template("report.html.j2").render(
        context, script=Markup(script), style=Markup(style), csp=csp
    )


def write_report(
    results: dict[str, Any],
    path: Path | str,
    baseline: dict[str, Any] | None = None,
    guard: Guard | None = None,
) -> Path:
    """Write the report page to ``path`` whole or not at all (folders created as needed), never
    over a file the ``guard`` refuses, and return the path. Failures are ``OSError``."""
    path = Path(path)
    write_text(path, render_report(results, baseline), guard=guard)
    return path
