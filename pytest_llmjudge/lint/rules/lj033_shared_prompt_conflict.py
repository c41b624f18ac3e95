"""LJ033 shared-prompt-conflict."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from ..diagnostics import Diagnostic, Severity
from ..documents import BenchmarkDocument
from ..rule import Project, ProjectRule


class SharedPromptConflict(ProjectRule):
    """
    ## What it does
    Finds benchmarks that share one `llm_prompt_file` but disagree on `threshold` or
    `criticality`.

    ## Why is this bad?
    One prompt is one behavior (single behavior per judge), judged once per case. Two
    benchmarks that gate the same behavior differently, one as a `hard_gate` and one at a
    0.8 pass rate, give two release verdicts for the same evidence, and which one wins
    depends on the rubric that happens to include them.

    ## Example
    ```yaml
    # A-NEG1.yaml                               # A-NEG2.yaml
    threshold: 1.0                              threshold: 0.8
    criticality: hard_gate                      criticality: threshold_gate
    llm_prompt_file: evaluators/llm-judge/negation_simple_prompt.md   # both
    ```

    ## Use instead
    One benchmark per prompt, or the same threshold and criticality on every benchmark that
    shares it; if the behaviors really differ, give each its own prompt file.
    """

    code = "LJ033"
    name = "shared-prompt-conflict"
    severity = Severity.ERROR
    summary = "Benchmarks sharing a prompt file disagree on threshold or criticality"

    def check(self, project: Project) -> Iterable[Diagnostic]:
        by_prompt: dict[Path, list[BenchmarkDocument]] = defaultdict(list)
        for doc in project.benchmarks:
            if doc.benchmark.prompt_path:
                by_prompt[doc.benchmark.prompt_path.resolve()].append(doc)
        for sharing in by_prompt.values():
            settings = {(d.benchmark.spec.threshold, d.benchmark.spec.criticality) for d in sharing}
            if len(settings) < 2:
                continue
            for doc in sharing:
                others = ", ".join(
                    f"{o.benchmark.code} ({_gate(o)})"
                    for o in sharing
                    if o is not doc and _gate(o) != _gate(doc)
                )
                where = doc.where("llm_prompt_file")
                message = (
                    f"{doc.benchmark.code} ({_gate(doc)}) shares its prompt file with {others}: "
                    "one prompt is one behavior with one gate"
                )
                yield self.diagnostic(doc.display, where.line, where.col, message)


def _gate(doc: BenchmarkDocument) -> str:
    spec = doc.benchmark.spec
    return f"threshold {spec.threshold}, {spec.criticality}"
