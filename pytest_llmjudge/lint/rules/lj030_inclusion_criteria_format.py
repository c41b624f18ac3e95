"""LJ030 inclusion-criteria-format."""

from __future__ import annotations

from collections.abc import Iterable

from ...compile.request import _CRITERION as APPLY_WHEN_FLAG_IF
from ..diagnostics import Diagnostic, Severity
from ..documents import BenchmarkDocument
from ..rule import BenchmarkRule


class InclusionCriteriaFormat(BenchmarkRule):
    """
    ## What it does
    Checks that a benchmark's `inclusion_criteria` read "Apply when <trigger>. Flag if <failure>."
    (each item, when the criteria are a list).

    ## Why is this bad?
    The two halves map onto the rubric: the trigger becomes the EVALUATION SCOPE Include list
    and the failure an "Automatic fail" bullet. When a benchmark has no prompt file, the
    rubric is built from these fields, and a criterion in another form becomes one vague
    automatic-fail bullet with no scope.

    ## Example
    ```yaml
    inclusion_criteria: Vital signs must match the narrative.
    ```

    ## Use instead
    ```yaml
    inclusion_criteria: >
      Apply when the narrative states vital signs. Flag if the output omits a stated vital
      sign or changes its value.
    ```
    """

    code = "LJ030"
    name = "inclusion-criteria-format"
    severity = Severity.WARNING
    summary = "inclusion_criteria are not phrased 'Apply when … Flag if …'"

    def check(self, benchmark: BenchmarkDocument) -> Iterable[Diagnostic]:
        criteria = benchmark.benchmark.spec.inclusion_criteria
        if criteria is None:
            return
        items = [criteria] if isinstance(criteria, str) else criteria
        for i, item in enumerate(items):
            if not APPLY_WHEN_FLAG_IF.match(" ".join(item.split())):
                where = benchmark.where("inclusion_criteria", *(() if isinstance(criteria, str) else (i,)))
                message = "inclusion criterion is not phrased 'Apply when <trigger>. Flag if <failure>.'"
                yield self.diagnostic(benchmark.display, where.line, where.col, message)
