"""The summary's task line: the outputs the task step produced and its errors, counted apart from
the judge's (a task that raised is the system under test's failure, not the judge's)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from ..gating.gates import task_errored
from ..gating.records import CaseRecord

PRODUCED, FROM_CACHE = "task", "task cache"  # pipeline.task_step's sources of a produced output


def task_lines(records: Sequence[CaseRecord]) -> list[str]:
    """The summary's task line, then the models that answered the task calls (none without tasks)."""
    line = task_line(records)
    return [] if line is None else [line, *task_model_lines(records)]


def task_model_lines(records: Iterable[CaseRecord]) -> list[str]:
    """``task model openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 (fingerprint fp_1)``,
    once for each model that answered the task calls behind this run's outputs (cached ones too)."""
    seen: dict[tuple[str, str, str | None], None] = {}
    for r in records:
        produced = r.produced
        if produced is not None and produced.answered_by:
            answered = produced.answered_by
            seen[(produced.task or "", answered["model"], answered.get("fingerprint"))] = None
    lines = []
    for task, model, fingerprint in sorted(seen, key=str):
        said = f" (fingerprint {fingerprint})" if fingerprint else ""
        lines.append(f"task model {task} answered as {model}{said}")
    return lines


def task_line(records: Iterable[CaseRecord]) -> str | None:
    """``task: 3 output(s) produced, 2 from the output cache, 1 error(s) (1 task-timeout)``;
    None when no case had a task."""
    produced = cached = 0
    kinds: Counter[str] = Counter()
    for r in records:
        source = r.produced.source if r.produced is not None else None
        produced += source == PRODUCED
        cached += source == FROM_CACHE
        if task_errored(r):
            kinds[r.reason.split(":", 1)[0]] += 1
    if not (produced or cached or kinds):
        return None
    text = f"task: {produced} output(s) produced"
    if cached:
        text += f", {cached} from the output cache"
    text += f", {sum(kinds.values())} error(s)"
    if kinds:
        ordered = sorted(kinds.items(), key=lambda kind_count: (-kind_count[1], kind_count[0]))
        text += f" ({', '.join(f'{count} {kind}' for kind, count in ordered)})"
    return text
