"""LJ031 missing-prompt-file."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..documents import BenchmarkDocument
from ..rule import BenchmarkRule


class MissingPromptFile(BenchmarkRule):
    """
    ## What it does
    Finds a benchmark with `evaluator_type: llm_judge` or `hybrid` and no `llm_prompt_file`.

    ## Why is this bad?
    Without a prompt file the plugin builds the rubric from `concept`, `inclusion_criteria`
    and `exclusion_criteria`: no pass conditions beyond "no automatic-fail condition holds",
    no acceptable variations, no reviewed wording. That is a stop-gap, not a judge prompt
    anyone has read.

    ## Example
    ```yaml
    code: A-VIT1
    evaluator_type: llm_judge
    ```

    ## Use instead
    ```yaml
    code: A-VIT1
    evaluator_type: llm_judge
    llm_prompt_file: evaluators/llm-judge/vitals_transcribed_prompt.md
    ```
    """

    code = "LJ031"
    name = "missing-prompt-file"
    severity = Severity.WARNING
    summary = "An llm_judge or hybrid benchmark has no llm_prompt_file"

    def check(self, benchmark: BenchmarkDocument) -> Iterable[Diagnostic]:
        spec = benchmark.benchmark.spec
        if spec.evaluator_type in {"llm_judge", "hybrid"} and not spec.llm_prompt_file:
            where = benchmark.where("evaluator_type")
            message = (
                f"evaluator_type '{spec.evaluator_type}' has no llm_prompt_file: "
                "the rubric is built from concept and criteria only"
            )
            yield self.diagnostic(benchmark.display, where.line, where.col, message)
