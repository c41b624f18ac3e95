"""A rubric edit measured against human labels: two runs' verdicts on the same labelled cases.

Each labelled case is either right (the judge's verdict is its human label) or wrong in each run.
Pairing the two runs case by case gives, per benchmark, the agreement figures before and after
(TPR, TNR, Cohen's κ, agreement), an exact McNemar test on right/wrong (Holm-adjusted across
benchmarks, as the baseline comparison does for pass/fail) and the cases that changed. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .calibration import Agreement, agreement, confusion
from .statistics import DEFAULT_ALPHA, DEFAULT_MARGIN, Verdict, compare_benchmarks

AgreementVerdict = Literal[
    "agreement improved", "agreement worse", "no significant difference", "inconclusive"
]

_VERDICTS: dict[Verdict, AgreementVerdict] = {
    "improvement": "agreement improved",
    "regression": "agreement worse",
    "no significant change": "no significant difference",
    "inconclusive": "inconclusive",
}


@dataclass(frozen=True)
class Judgment:
    """The judge's verdict on one labelled case of one run."""

    case: str  # the case id; a calibration case's is prefixed "calibration::"
    location: str
    human_pass: bool
    judge_pass: bool
    reason: str

    @property
    def right(self) -> bool:
        return self.human_pass == self.judge_pass


@dataclass(frozen=True)
class LabelChange:
    """A labelled case the judge got right in one run and wrong in the other."""

    case: str
    location: str
    human_pass: bool
    before: Judgment
    after: Judgment

    @property
    def turned_right(self) -> bool:
        return self.after.right


@dataclass(frozen=True)
class LabelComparison:
    """One benchmark's agreement with its human labels, before and after, over its paired labels.

    ``turned_wrong`` / ``turned_right``: the discordant pairs of the McNemar test; ``unpaired``:
    labelled cases judged in one run only, or labelled differently in the two.
    """

    benchmark: str
    before: Agreement
    after: Agreement
    turned_wrong: int
    turned_right: int
    p_value: float
    p_adjusted: float
    verdict: AgreementVerdict
    changes: tuple[LabelChange, ...]
    unpaired: int

    @property
    def n_paired(self) -> int:
        return self.before.n_labels


def accuracy(figures: Agreement) -> float | None:
    """The share of labels the judge matched; None without labels."""
    return (figures.tp + figures.tn) / figures.n_labels if figures.n_labels else None


CALIBRATION_PREFIX = "calibration::"


def labelled_judgments(results: Mapping[str, Any]) -> dict[str, dict[str, Judgment]]:
    """Benchmark code → case → the judge's verdict on each labelled case a results file judged.

    A calibration case's ``result`` says whether the judge agreed with its label; a release case's
    is the verdict itself. Errors and skips have no verdict. Benchmarks without one are left out.
    """
    judged: dict[str, dict[str, Judgment]] = {}
    for benchmark in results["benchmarks"]:
        cases: dict[str, Judgment] = {}
        for case in benchmark["cases"]:
            label, result = case["label"], case["result"]
            if label is None or result not in ("pass", "fail"):
                continue
            human = label == "pass"
            judge = (human if result == "pass" else not human) if case["calibration"] else result == "pass"
            key = CALIBRATION_PREFIX + case["id"] if case["calibration"] else case["id"]
            cases[key] = Judgment(key, case["location"], human, judge, case["reason"])
        if cases:
            judged[benchmark["code"]] = cases
    return judged


def compare_labels(
    before: Mapping[str, Mapping[str, Judgment]],
    after: Mapping[str, Mapping[str, Judgment]],
    *,
    margin: float = DEFAULT_MARGIN,
    alpha: float = DEFAULT_ALPHA,
) -> tuple[LabelComparison, ...]:
    """Every benchmark labelled in both runs, in the order of ``after``: paired by case, a case
    counting only when its human label is the same in both runs."""
    paired: dict[str, list[tuple[Judgment, Judgment]]] = {}
    unpaired: dict[str, int] = {}
    for code, now in after.items():
        if code not in before:
            continue
        then = before[code]
        pairs = [(then[c], j) for c, j in now.items() if c in then and then[c].human_pass == j.human_pass]
        paired[code] = pairs
        unpaired[code] = len(then.keys() | now.keys()) - len(pairs)
    rightness = {
        code: ({b.case: b.right for b, _ in pairs}, {a.case: a.right for _, a in pairs})
        for code, pairs in paired.items()
    }
    tests = compare_benchmarks(rightness, margin=margin, alpha=alpha)
    return tuple(
        _comparison(code, pairs, test.p_value, test.p_adjusted, _VERDICTS[test.verdict], unpaired[code])
        for (code, pairs), test in zip(paired.items(), tests, strict=True)
    )


def _comparison(
    code: str,
    pairs: list[tuple[Judgment, Judgment]],
    p_value: float,
    p_adjusted: float,
    verdict: AgreementVerdict,
    unpaired: int,
) -> LabelComparison:
    changes = tuple(
        LabelChange(a.case, a.location, a.human_pass, b, a) for b, a in pairs if b.right != a.right
    )
    turned_right = sum(1 for change in changes if change.turned_right)
    return LabelComparison(
        benchmark=code,
        before=agreement(confusion((b.human_pass, b.judge_pass) for b, _ in pairs)),
        after=agreement(confusion((a.human_pass, a.judge_pass) for _, a in pairs)),
        turned_wrong=len(changes) - turned_right,
        turned_right=turned_right,
        p_value=p_value,
        p_adjusted=p_adjusted,
        verdict=verdict,
        changes=changes,
        unpaired=unpaired,
    )


def compare_label_results(
    before: Mapping[str, Any], after: Mapping[str, Any], *, margin: float, alpha: float
) -> tuple[LabelComparison, ...]:
    """``compare_labels`` of two results files; empty unless both judged labelled cases."""
    return compare_labels(labelled_judgments(before), labelled_judgments(after), margin=margin, alpha=alpha)
