"""LJ032 unused-prompt-file."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..rule import Project, ProjectRule


class UnusedPromptFile(ProjectRule):
    """
    ## What it does
    Finds a prompt file that no benchmark of the repository names in `llm_prompt_file`. It
    looks at every benchmark under the configured benchmark folders (`benchmarks` in
    `[tool.llmjudge.lint]`, default `benchmarks/`), not only at the files being linted, and
    says nothing when the repository has no benchmarks at all.

    ## Why is this bad?
    An unused prompt is never compiled, snapshot-checked or judged: edits to it change
    nothing, and a benchmark meant to use it is silently judged by a rubric built from its
    fields instead (often the result of a renamed file).

    ## Example
    ```text
    evaluators/llm-judge/vitals_prompt.md      # no benchmark names it
    benchmarks/a-component/A-VIT1.yaml         # evaluator_type: llm_judge, no llm_prompt_file
    ```

    ## Use instead
    ```yaml
    # benchmarks/a-component/A-VIT1.yaml
    llm_prompt_file: evaluators/llm-judge/vitals_prompt.md
    ```
    or delete the prompt file.
    """

    code = "LJ032"
    name = "unused-prompt-file"
    severity = Severity.WARNING
    summary = "No benchmark uses this prompt file"

    def check(self, project: Project) -> Iterable[Diagnostic]:
        if not project.benchmarks:
            return
        used = {b.benchmark.prompt_path.resolve() for b in project.benchmarks if b.benchmark.prompt_path}
        for prompt in project.prompts:
            if prompt.path.resolve() not in used:
                message = "no benchmark names this prompt file in llm_prompt_file"
                yield self.diagnostic(prompt.display, 1, 1, message)
