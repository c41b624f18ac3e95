"""Calibration items: a benchmark's ``calibration_file`` cases, judged and compared with their
human label (``…::CODE::calibration::<id>``). They pass when judge and human agree and do not
count toward the pass rate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..reporting.failures import failure_text
from .nodes import CaseItem

if TYPE_CHECKING:
    from ..judging.verdict import Outcome, Verdict
    from ..suite.settings import RunSettings

CALIBRATION_PREFIX = "calibration::"
LABELLED_KEYWORD = "llmjudge_labelled"  # ``-k llmjudge_labelled`` selects every labelled case


class JudgeDisagrees(Exception):
    """The judge's verdict on a calibration case differs from the human label."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome)
        self.outcome = outcome


class CalibrationItem(CaseItem):
    """One calibration case: the judge's verdict against the human label."""

    def runtest(self) -> None:
        assert self.outcome is not None and self.outcome.verdict is not None
        if self.outcome.verdict.effective_pass != (self.case.spec.label == "pass"):
            raise JudgeDisagrees(self.outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, JudgeDisagrees):
            outcome = excinfo.value.outcome
            judge = "pass" if outcome.verdict and outcome.verdict.effective_pass else "fail"
            head = f"calibration: human label {self.case.spec.label}, judge {judge}"
            text = failure_text(self.benchmark, self.case, self.request, outcome, self.sections_excerpt())
            return f"{head}\n{text}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> Any:
        path, line, _ = super().reportinfo()
        return path, line, f"{self.benchmark.code}::{CALIBRATION_PREFIX}{self.case.id}"


def calibration_fields(item: CaseItem, verdict: Verdict | None) -> dict[str, Any]:
    """The calibration fields of a case record: calibration case, judge verdict, trust minimums."""
    from .run_state import STATE

    settings: RunSettings = item.config.stash[STATE].settings
    own = item.benchmark.spec.judge

    def minimum(name: str) -> Any:
        value = getattr(own, name, None) if own is not None else None
        return value if value is not None else getattr(settings, name)

    return {
        "calibration": isinstance(item, CalibrationItem),
        "judge_pass": None if verdict is None else verdict.effective_pass,
        "min_tpr": minimum("min_tpr"),
        "min_tnr": minimum("min_tnr"),
        "min_labels": minimum("min_labels"),
    }
