"""``--llmjudge-rejudge-baseline``: outputs of another run (the baseline's, stored in its results
file) judged by this run's judge of each case's benchmark, through ``settle.settle_or_judge``
like every other call: the cache (a stale verdict is judged again, ``pipeline.rejudge``), prices,
budget, servers and retries; the new verdicts are cached."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..execution.samples import sample_key
from ..judging.verdict import Outcome
from .settle import Ask, checks_decide, sample_count, send, settle_or_judge

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
    from ..suite.files import Benchmark, Case
    from .host import Host, JudgedCase

Combine = Callable[["Benchmark", list[Outcome]], Outcome]


@dataclass(frozen=True)
class Rejudged:
    """A case of this run with the baseline run's output in place of its own, to be judged."""

    nodeid: str
    benchmark: Benchmark
    case: Case
    request: CompiledRequest


def rejudge_outputs(
    host: Host, cases: Sequence[JudgedCase], combine: Combine | None = None
) -> dict[str, Outcome]:
    """Each case's outcome as this run decides it: by its code checks when they decide (``code``,
    and ``hybrid`` whose checks fail), else judged by this run's judge of its benchmark (its
    samples combined by ``combine``, as the run's are) through the cache. A manual case, or one
    whose judge cannot be set up (a panel's), is left out."""
    from ..execution.jobs import judge_job
    from ..judging.llmjudge import judge_once
    from ..models.judges import JudgeSetupError

    asks: list[Ask] = []
    counts: dict[str, int] = {}
    outcomes: dict[str, Outcome] = {}
    for case in cases:
        if case.benchmark.spec.evaluator_type == "manual_sme":
            continue
        if (checked := checks_decide(case)) is not None:  # code checks decide, as in the run
            outcomes[case.nodeid] = checked
            continue
        try:
            config = host.judge_config(case)
        except JudgeSetupError:
            continue
        counts[case.nodeid] = sample_count(case.benchmark, host.settings)
        for index in range(counts[case.nodeid]):
            job = judge_job(case.benchmark.code, case.case.id, case.request, config, index, judge_once)
            asks.append(Ask(sample_key(case.nodeid, index), job, config))
    settled, pending = settle_or_judge(host, asks, judge_once)
    send(host, pending)
    found = {ask.key: s for ask, s in zip(asks, settled, strict=True) if s is not None}
    for key, _ in pending:
        assert host.scheduler is not None
        found[key] = host.scheduler.result(key)
    by_case = {c.nodeid: c for c in cases}
    for nodeid, repeats in counts.items():
        samples = [found[sample_key(nodeid, i)] for i in range(repeats)]
        benchmark = by_case[nodeid].benchmark
        outcomes[nodeid] = combine(benchmark, samples) if combine and repeats > 1 else samples[0]
    return outcomes
