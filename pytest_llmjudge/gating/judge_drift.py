"""The judge's drift, measured on identical outputs: the baseline run's stored outputs judged
again by this run's judge (``--llmjudge-rejudge-baseline``), each verdict set beside the one the
baseline recorded. Pure: results files and verdicts in, frozen values out.

The baseline's verdicts that flip (pass → fail, fail → pass) when the same outputs are judged
again measure the judge alone; an exact McNemar test says whether the flips lean one way more
than chance would. The comparison of the two runs then rests on this run's judge: the baseline's
verdicts are replaced by the new ones and its judges by the ones that gave them.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .drift import SeenJudge, judges_of_results
from .statistics import mcnemar_exact_p

NO_OUTPUT_HELP = (
    "--llmjudge-rejudge-baseline judges the baseline's stored outputs again, and a results file "
    "keeps them from format 2 on (each case's 'produced'); rerun the baseline with this version"
)


@dataclass(frozen=True)
class JudgeDrift:
    """How one benchmark's baseline verdicts changed when its outputs were judged again."""

    benchmark: str
    rejudged: int  # baseline verdicts judged again
    pass_to_fail: int
    fail_to_pass: int
    p_value: float  # exact McNemar (two-sided) of the flips
    baseline_judges: str  # who gave the baseline's verdicts, labelled
    judge: str  # who gave the new ones

    def text(self) -> str:
        """``2 of 20 verdicts flipped (2 pass → fail, 0 fail → pass; McNemar p = 0.5)``…"""
        flipped = self.pass_to_fail + self.fail_to_pass
        return (
            f"judge drift on the baseline's outputs: {flipped} of {self.rejudged} verdict(s) flipped "
            f"({self.pass_to_fail} pass → fail, {self.fail_to_pass} fail → pass; exact McNemar "
            f"p = {self.p_value:.3g}); baseline judged by {self.baseline_judges or 'an unknown judge'}, "
            f"judged again by {self.judge or 'an unknown judge'}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "rejudged": self.rejudged,
            "pass_to_fail": self.pass_to_fail,
            "fail_to_pass": self.fail_to_pass,
            "p_value": self.p_value,
            "baseline_judges": self.baseline_judges,
            "judge": self.judge,
        }


def release_cases(results: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The (benchmark code, case) pairs of a results file whose verdict a comparison pairs: release
    cases that passed or failed (not calibration cases, not pairwise ones)."""
    return [
        (b["code"], c)
        for b in results["benchmarks"]
        for c in b["cases"]
        if c["result"] in ("pass", "fail") and not c["calibration"] and not c.get("pairwise")
    ]


def without_outputs(results: Mapping[str, Any]) -> list[str]:
    """``CODE::ID`` of each compared case whose output the results file did not store."""
    return [f"{code}::{case['id']}" for code, case in release_cases(results) if case.get("produced") is None]


def drift_of(
    baseline: Mapping[str, Any],
    rejudged: Mapping[str, Mapping[str, bool | None]],
    judges: Mapping[str, Sequence[SeenJudge]],
) -> tuple[JudgeDrift, ...]:
    """Per benchmark judged again: the baseline's verdicts beside the new ones (``rejudged``:
    code → case id → passed, None when the call failed), and who gave each."""
    before: dict[str, dict[str, bool]] = {}
    for code, case in release_cases(baseline):
        before.setdefault(code, {})[case["id"]] = case["result"] == "pass"
    seen_before = judges_of_results(baseline)
    drift: list[JudgeDrift] = []
    for code, verdicts in rejudged.items():
        old = before.get(code, {})
        paired = [(old[case], new) for case, new in verdicts.items() if case in old and new is not None]
        b = sum(1 for old, new in paired if old and not new)
        c = sum(1 for old, new in paired if new and not old)
        labels = (_labels(seen_before.get(code, ())), _labels(judges.get(code, ())))
        drift.append(JudgeDrift(code, len(paired), b, c, mcnemar_exact_p(b, c), *labels))
    return tuple(drift)


def judges_counted(answers: Iterable[tuple[str, str, str | None]]) -> tuple[SeenJudge, ...]:
    """The judges behind verdicts given as (model string, snapshot, fingerprint), most first."""
    counts = Counter(answers)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0][0], item[0][1], item[0][2] or ""))
    return tuple(SeenJudge(requested, model, fp, n) for (requested, model, fp), n in ordered)


def _labels(seen: Sequence[SeenJudge]) -> str:
    return " and ".join(s.label() for s in seen)


def on_this_judge(
    baseline: Mapping[str, Any],
    rejudged: Mapping[str, Mapping[str, bool | None]],
    judges: Mapping[str, Sequence[SeenJudge]],
) -> dict[str, Any]:
    """A copy of ``baseline`` whose re-judged cases carry their new verdicts, and whose
    benchmarks judged again name the judges that gave them; a compared case that could not be
    judged again (its judge call failed) is an error, so no comparison pairs it."""
    copied = copy.deepcopy(dict(baseline))
    for benchmark in copied["benchmarks"]:
        code = benchmark["code"]
        if code not in rejudged:
            continue
        verdicts = rejudged[code]
        benchmark["judges"] = [s.to_json() for s in judges.get(code, ())]
        for case in benchmark["cases"]:
            if case["calibration"] or case["id"] not in verdicts:
                continue
            passed = verdicts[case["id"]]
            case["result"] = "error" if passed is None else ("pass" if passed else "fail")
    return copied
