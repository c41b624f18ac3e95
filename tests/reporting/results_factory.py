"""Realistic results dicts (format 1) for tests, the screenshot and ``bench/report_open.py``.

``make_results`` builds a run of six benchmarks in two rubrics, some failing, one judged three
times per case (with flaky cases), two with human labels and calibration, a skipped and an
errored case, and (with a baseline) a comparison and flipped cases. Same seed, same dict.
"""

from __future__ import annotations

import copy
import json
import math
import random
from dataclasses import dataclass
from typing import Any

Results = dict[str, Any]


@dataclass(frozen=True)
class BenchmarkSpec:
    code: str
    label: str
    threshold: float | None
    criticality: str
    weight: float
    rubric: str
    fail_rate: float
    share: float  # of the run's cases
    repeats: int = 1
    labelled: bool = False
    evaluator_type: str = "llm_judge"


SPECS = (
    BenchmarkSpec("A-MED1", "Medications extracted correctly", 0.9, "threshold_gate", 0.4, "A", 0.22, 0.4),
    BenchmarkSpec(
        "A-NEG1", "Negated findings stay negated", 1.0, "hard_gate", 0.3, "A", 0.08, 0.15, labelled=True
    ),
    BenchmarkSpec("A-VIT1", "Vital signs transcribed", 0.8, "threshold_gate", 0.2, "A", 0.1, 0.15, repeats=3),
    BenchmarkSpec(
        "A-FMT1", "Output is valid JSON", None, "hard_gate", 0.1, "A", 0.0, 0.05, evaluator_type="code"
    ),
    BenchmarkSpec(
        "B-ALG1", "Allergies recorded", 0.85, "threshold_gate", 0.6, "B", 0.05, 0.15, labelled=True
    ),
    BenchmarkSpec("B-DOS1", "Doses within range", 0.8, "threshold_gate", 0.4, "B", 0.12, 0.1),
)

DRUGS = (
    "aspirin 324 mg PO",
    "nitroglycerin 0.4 mg SL",
    "morphine 4 mg IV",
    "ondansetron 4 mg IV",
    "heparin 5000 units SC",
    "metoprolol 5 mg IV",
    "albuterol 2.5 mg NEB",
    "naloxone 0.4 mg IN",
)
SCENARIOS = ("chest pain", "fall from standing", "shortness of breath", "syncope", "overdose", "stroke alert")
PASS_REASONS = (
    "all ground-truth medications present with matching doses",
    "every negated finding is recorded as absent",
    "values match the narrative within rounding",
)
FAIL_REASONS = (
    "aspirin 324 mg PO is missing from the output",
    "the output records chest pain as present although the narrative negates it",
    "heart rate 112 transcribed as 12",
    "dose of morphine given as 40 mg instead of 4 mg",
)
INSTRUCTIONS = (
    "You are a neutral medical documentation evaluator.\nYou evaluate one behavior at a time.\n"
    "Use only the information in the provided inputs."
)


def make_results(cases: int = 60, *, seed: int = 7, baseline: Results | None = None) -> Results:
    """A validated-shape run of about ``cases`` cases; with ``baseline``, compared against it."""
    rng = random.Random(seed)
    benchmarks = [_benchmark(spec, max(2, round(cases * spec.share)), rng) for spec in SPECS]
    results: Results = {
        "format": 2,
        "started": "2026-11-23T10:30:00Z",
        "finished": "2026-11-23T10:31:42.517Z",
        "plugin_version": "0.1.0",
        "pydantic_ai_version": "2.62.0",
        "command": ["pytest", "benchmarks", "--llmjudge-model", "openai:gpt-4o", "--llmjudge-repeats", "1"],
        "commit": "3f2c9e1a7b40d5e6f8a9b0c1d2e3f4a5b6c7d8e9",
        "rootdir": "/home/ci/clinical-copilot",
        "suite_digest": "9d0937837a7a41f0c2b5e8d6a1f3c7b9",
        "exit_status": 0,
        "exit_reasons": [],
        "settings": {
            "repeats": 1,
            "gate": "point",
            "margin": 0.05,
            "alpha": 0.05,
            "fail_on": None,
            "baseline": None,
        },
        "totals": _totals(benchmarks),
        "benchmarks": benchmarks,
        "rubrics": [_rubric(code, benchmarks) for code in ("A", "B")],
        "comparison": None,
        "flips": None,
    }
    if baseline is not None:
        results["settings"]["baseline"] = ".llmjudge/runs/20261116T091500Z-9d0937837a7a.json"
        results["settings"]["fail_on"] = "regression"
        results["comparison"] = comparison(baseline, results)
        results["flips"] = flips(baseline, results)
    failing = [b["code"] for b in benchmarks if b["gate"]["status"] == "fail"]
    failing += [r["code"] for r in results["rubrics"] if r["status"] == "fail"]
    errors = results["totals"]["errors"]
    reasons = [f"gate failed: {code}" for code in failing]
    reasons += [
        f"regression against the baseline: {row['benchmark']}"
        for row in results["comparison"] or []
        if row["verdict"] == "regression"
    ]
    if errors:
        reasons.append(f"{errors} case(s) errored")
    results["exit_status"] = 1 if reasons else 0
    results["exit_reasons"] = reasons
    return results


def make_baseline(cases: int = 60, *, seed: int = 7, flip_seed: int = 11) -> Results:
    """An earlier run of the same suite: A-MED1 passed the cases that fail now (a regression),
    elsewhere a few cases had the other verdict."""
    earlier = copy.deepcopy(make_results(cases, seed=seed))
    earlier["started"], earlier["finished"] = "2026-11-16T09:15:00Z", "2026-11-16T09:16:51Z"
    rng = random.Random(flip_seed)
    for benchmark in earlier["benchmarks"]:
        regressed = benchmark["code"] == "A-MED1"
        for case in benchmark["cases"]:
            if case["result"] == "fail" and regressed:
                case["result"] = "pass"
            elif case["result"] in ("pass", "fail") and not regressed and rng.random() < 0.06:
                case["result"] = "fail" if case["result"] == "pass" else "pass"
        _regate(benchmark)
    earlier["totals"] = _totals(earlier["benchmarks"])
    earlier["rubrics"] = [_rubric(code, earlier["benchmarks"]) for code in ("A", "B")]
    return earlier


def _benchmark(spec: BenchmarkSpec, count: int, rng: random.Random) -> dict[str, Any]:
    code_only = spec.evaluator_type == "code"
    judge = (
        None
        if code_only
        else {
            "model": "openai:gpt-4o",
            "settings": {"temperature": 0.0, "max_tokens": 400, "timeout": 60},
            "instructions_digest": f"{rng.getrandbits(64):016x}",
            "fingerprint": f"{rng.getrandbits(64):016x}",
        }
    )
    request = None if code_only else {"instructions": INSTRUCTIONS, "rubric": _rubric_text(spec)}
    cases = [_case(spec, index, rng) for index in range(count)]
    if spec.code == "A-MED1" and count > 3:
        cases[3]["result"], cases[3]["reason"] = "error", "judge call timed out after 4 attempts (60 s each)"
        cases[3]["score"], cases[3]["samples"][0].update({"pass": None, "error": "TimeoutError: 60 s"})
    if spec.code == "B-DOS1":
        cases[-1].update(result="skip", reason="manual_sme: reviewed by a pharmacist", score=None, samples=[])
    benchmark = {
        "code": spec.code,
        "label": spec.label,
        "threshold": spec.threshold,
        "criticality": spec.criticality,
        "weight": spec.weight,
        "parent_rubric": spec.rubric,
        "evaluator_type": spec.evaluator_type,
        "judge": judge,
        "repeats": spec.repeats,
        "reduce": "majority",
        "gate_rule": "point",
        "request": request,
        "gate": {},
        "calibration": _calibration(cases) if spec.labelled else None,
        "cases": cases,
    }
    _regate(benchmark)
    return benchmark


def _case(spec: BenchmarkSpec, index: int, rng: random.Random) -> dict[str, Any]:
    drugs = rng.sample(DRUGS, 2)
    passed = rng.random() >= spec.fail_rate
    samples = []
    code_only = spec.evaluator_type == "code"
    for number in range(spec.repeats):
        verdict = passed if number == 0 or rng.random() > 0.15 else not passed
        if code_only:
            samples.append(_check_sample(verdict))
            continue
        cached = rng.random() < 0.3
        samples.append(
            {
                "index": number,
                "pass": verdict,
                "reason": rng.choice(PASS_REASONS if verdict else FAIL_REASONS),
                "score": 1.0 if verdict else 0.0,
                "uncertain": False,
                "cached": cached,
                "input_tokens": 0 if cached else rng.randint(600, 1060),
                "output_tokens": 0 if cached else rng.randint(14, 60),
                "latency_s": None if cached else round(rng.uniform(0.4, 3.2), 3),
                "error": None,
            }
        )
    votes = [s["pass"] for s in samples]
    majority = sum(1 for v in votes if v) * 2 > len(votes)
    flaky = len(set(votes)) > 1
    label = None
    if spec.labelled:
        label = ("pass" if majority else "fail") if rng.random() > 0.1 else ("fail" if majority else "pass")
    case_id = f"{rng.choice(SCENARIOS).replace(' ', '-')}-{index:04d}"
    return {
        "id": case_id,
        "nodeid": f"benchmarks/{spec.code}.yaml::{spec.code}::{case_id}",
        "location": f"benchmarks/{spec.code}.yaml:{12 + 9 * index}",
        "calibration": False,  # a labelled release case: gated, and counted in the calibration
        "request_digest": f"{rng.getrandbits(64):016x}",
        "label": label,
        "result": "pass" if majority else "fail",
        "reason": samples[0]["reason"],
        "score": 1.0 if majority else 0.0,
        "uncertain": False,
        "flaky": flaky,
        "stability": sum(1 for v in votes if v == majority) / len(votes),
        "request": {
            "input": json.dumps(
                {
                    "source_narrative": f"Pt given {drugs[0]} and {drugs[1]}.",
                    "scenario": rng.choice(SCENARIOS),
                },
                indent=2,
            ),
            "output": json.dumps({"medications": drugs if passed else drugs[:1]}, indent=2),
            "expected": json.dumps({"medications": drugs}, indent=2),
        },
        "samples": samples,
        "produced": {
            "source": "case file",
            "output": {"medications": drugs if passed else drugs[:1]},
            "task": None,
            "fingerprint": None,
            "latency": None,
            "input_tokens": 0,
            "output_tokens": 0,
        },
    }


def _check_sample(passed: bool) -> dict[str, Any]:
    return {
        "index": 0,
        "pass": passed,
        "reason": "output is a JSON object" if passed else "output is not JSON",
        "score": None,
        "uncertain": False,
        "cached": False,
        "input_tokens": 0,
        "output_tokens": 0,
        "latency_s": 0.001,
        "error": None,
    }


def _rubric_text(spec: BenchmarkSpec) -> str:
    return (
        f"BEHAVIOR: {spec.label.lower()}\n\nAutomatic fail if any of the following are true:\n"
        "- Any administered medication in the ground truth is missing from the output.\n"
        "Pass conditions (all must be satisfied):\n"
        "1. Every administered medication in the ground truth appears in the output."
    )


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float] | None:
    if n == 0:
        return None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _regate(benchmark: dict[str, Any]) -> None:
    """Recompute a benchmark's gate from its cases (point rule, Wilson interval)."""
    cases = benchmark["cases"]
    count = {r: sum(1 for c in cases if c["result"] == r) for r in ("pass", "fail", "error", "skip")}
    verdicts = count["pass"] + count["fail"]
    rate = count["pass"] / verdicts if verdicts else None
    interval = wilson(count["pass"], verdicts)
    threshold = benchmark["threshold"]
    if benchmark["criticality"] == "hard_gate" and count["fail"]:
        status, detail = "fail", f"hard gate: {count['fail']} case(s) failed"
    elif rate is None:
        status, detail = "no verdicts", "no case gave a verdict"
    elif threshold is None:
        status, detail = ("pass" if benchmark["criticality"] == "hard_gate" else "not scored"), ""
    elif rate + 1e-9 >= threshold:
        status, detail = "pass", ""
    else:
        status, detail = "fail", f"pass rate {rate:.1%} below threshold {threshold:g}"
    benchmark["gate"] = {
        "status": status,
        "cases": len(cases),
        "passed": count["pass"],
        "failed": count["fail"],
        "errors": count["error"],
        "skipped": count["skip"],
        "review": sum(1 for c in cases if c["uncertain"]),
        "flaky": sum(1 for c in cases if c["flaky"]),
        "pass_rate": rate,
        "ci_low": interval[0] if interval else None,
        "ci_high": interval[1] if interval else None,
        "interval_method": ("cluster" if benchmark["repeats"] > 1 else "wilson") if interval else None,
        "low_evidence": verdicts < 20,
        "detail": detail,
    }


def _calibration(cases: list[dict[str, Any]]) -> dict[str, Any]:
    def n(label: str, result: str) -> int:
        return sum(1 for c in cases if c["label"] == label and c["result"] == result)

    tp, fn, tn, fp = n("pass", "pass"), n("pass", "fail"), n("fail", "fail"), n("fail", "pass")
    labels = tp + fn + tn + fp
    tpr = tp / (tp + fn) if tp + fn else None
    tnr = tn / (tn + fp) if tn + fp else None
    balanced = (tpr + tnr) / 2 if tpr is not None and tnr is not None else None
    observed = (tp + tn) / labels if labels else 0.0
    expected = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / labels**2 if labels else 0.0
    kappa = (observed - expected) / (1 - expected) if labels and expected < 1 else None
    trusted = None if balanced is None else balanced >= 0.7
    return {
        "tp": tp,
        "fn": fn,
        "tn": tn,
        "fp": fp,
        "tpr": tpr,
        "tpr_ci": _pair(wilson(tp, tp + fn)),
        "tnr": tnr,
        "tnr_ci": _pair(wilson(tn, tn + fp)),
        "balanced_accuracy": balanced,
        "kappa": kappa,
        "n_labels": labels,
        "corrected_pass_rate": min(1.0, (tp + fp) / labels * 0.97) if labels else None,
        "corrected_ci": [0.71, 0.93] if labels else None,
        "chance": kappa is not None and kappa < 0.2,
        "trusted": trusted,
        "detail": "" if trusted else "balanced accuracy below 70%: the judge misses failing cases",
        "source": "run",
    }


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else list(interval)


def _totals(benchmarks: list[dict[str, Any]]) -> dict[str, int]:
    cases = [c for b in benchmarks for c in b["cases"]]
    samples = [s for c in cases for s in c["samples"]]
    return {
        "cases": len(cases),
        "passed": sum(1 for c in cases if c["result"] == "pass"),
        "failed": sum(1 for c in cases if c["result"] == "fail"),
        "errors": sum(1 for c in cases if c["result"] == "error"),
        "skipped": sum(1 for c in cases if c["result"] == "skip"),
        "flaky": sum(1 for c in cases if c["flaky"]),
        "calls": sum(1 for s in samples if not s["cached"]),
        "cache_hits": sum(1 for s in samples if s["cached"]),
        "input_tokens": sum(s["input_tokens"] for s in samples),
        "output_tokens": sum(s["output_tokens"] for s in samples),
    }


def _rubric(code: str, benchmarks: list[dict[str, Any]]) -> dict[str, Any]:
    members = [b for b in benchmarks if b["parent_rubric"] == code]
    threshold = 0.85 if code == "A" else 0.8
    hard = [b["code"] for b in members if b["criticality"] == "hard_gate" and b["gate"]["status"] == "fail"]
    rates = [(b["gate"]["pass_rate"], b["weight"]) for b in members if b["gate"]["pass_rate"] is not None]
    score = sum(r * w for r, w in rates) / sum(w for _, w in rates) if rates else None
    if hard:
        status, detail = "fail", f"hard gate failed: {', '.join(hard)}"
    elif score is None:
        status, detail = "incomplete", "no verdicts"
    else:
        status = "pass" if score + 1e-9 >= threshold else "fail"
        detail = "" if status == "pass" else f"score {score:.3f} below {threshold:g}"
    return {
        "code": code,
        "label": {"A": "Encounter extraction", "B": "Medication safety"}[code],
        "aggregation": "WEIGHTED_AVERAGE",
        "benchmarks": [b["code"] for b in members],
        "score": score,
        "threshold": threshold,
        "status": status,
        "detail": detail,
    }


def _verdicts(results: Results) -> dict[str, dict[str, bool]]:
    return {
        b["code"]: {c["id"]: c["result"] == "pass" for c in b["cases"] if c["result"] in ("pass", "fail")}
        for b in results["benchmarks"]
    }


def flips(baseline: Results, candidate: Results) -> list[dict[str, str]]:
    before, after = _verdicts(baseline), _verdicts(candidate)
    rows = []
    for code, cases in after.items():
        for case, now in cases.items():
            was = before.get(code, {}).get(case)
            if was is not None and was != now:
                rows.append(
                    {"benchmark": code, "case": case, "baseline": _word(was), "candidate": _word(now)}
                )
    return rows


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


def comparison(baseline: Results, candidate: Results) -> list[dict[str, Any]]:
    before, after = _verdicts(baseline), _verdicts(candidate)
    rows = []
    for code, now in after.items():
        was = before.get(code, {})
        paired = [case for case in now if case in was]
        b = sum(1 for case in paired if was[case] and not now[case])
        c = sum(1 for case in paired if not was[case] and now[case])
        p = _mcnemar_p(b, c)
        p_adjusted = min(1.0, p * len(after))
        difference = (c - b) / len(paired) if paired else None
        difference_ci = None
        if difference is not None:
            half = 1.96 * math.sqrt(b + c) / len(paired)
            difference_ci = [max(-1.0, difference - half), min(1.0, difference + half)]
        mde = min(1.0, 2.8 / math.sqrt(len(paired))) if paired else None
        verdict = "no significant change"
        if difference is not None and p_adjusted < 0.05:
            verdict = "regression" if difference < 0 else "improvement"
        elif mde is None or mde > 0.05:
            verdict = "inconclusive"
        rows.append(
            {
                "benchmark": code,
                "baseline_pass_rate": sum(was.values()) / len(was) if was else None,
                "candidate_pass_rate": sum(now.values()) / len(now) if now else None,
                "difference": difference,
                "difference_ci": difference_ci,
                "b": b,
                "c": c,
                "p_value": p,
                "p_adjusted": p_adjusted,
                "verdict": verdict,
                "unpaired": {
                    "baseline_only": sorted(set(was) - set(now)),
                    "candidate_only": sorted(set(now) - set(was)),
                },
                "mde": mde,
                "n_paired": len(paired),
            }
        )
    return rows


def _mcnemar_p(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: a binomial test of b against b + c at one half."""
    if b + c == 0:
        return 1.0
    tail = sum(math.comb(b + c, k) for k in range(min(b, c) + 1)) / (1 << (b + c))
    return min(1.0, 2 * tail)


HOSTILE = (
    "<script>window.__pwned=1</script>",
    '</td></tr></table><img src=x onerror="window.__pwned=1">',
    "</script><script>window.__pwned=1</script>",
    '<a href="javascript:window.__pwned=1">click</a>',
    "line\u2028separator\u2029paragraph",
    "\u202eevil reversed\u202c",
    "emoji 🧪🔥 and NUL \x00 here",
    "{{ 7*7 }} & &amp; \"quotes\" 'single'",
)


def make_hostile_results() -> Results:
    """A small run whose every untrusted string carries an injection attempt."""
    results = make_results(24, baseline=make_baseline(24))
    payload = " ".join(HOSTILE)
    results["command"].append(HOSTILE[0])
    results["exit_reasons"].append(HOSTILE[1])
    results["commit"] = HOSTILE[3]
    for number, benchmark in enumerate(results["benchmarks"]):
        benchmark["label"] = HOSTILE[number % len(HOSTILE)]
        benchmark["gate"]["detail"] = HOSTILE[2]
        if benchmark["request"] is not None:
            benchmark["request"]["rubric"] += "\n" + payload
        for index, case in enumerate(benchmark["cases"]):
            case["reason"] = f"{HOSTILE[index % len(HOSTILE)]} {payload}"
            if case["request"] is not None:
                case["request"]["output"] = payload
                case["request"]["input"] = HOSTILE[2]
            for sample in case["samples"]:
                sample["reason"] = payload
    results["benchmarks"][0]["cases"][0]["id"] = "<script>window.__pwned=1</script>"
    results["rubrics"][0]["detail"] = payload
    for flip in results["flips"]:
        flip["case"] = HOSTILE[1]
    return results
