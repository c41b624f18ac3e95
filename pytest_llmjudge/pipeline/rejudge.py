"""One judge per gate: cached verdicts that another resolved snapshot gave are judged again by
this run's judge (``--llmjudge-rejudge-stale``), and a baseline run's stored outputs are judged
by it (``--llmjudge-rejudge-baseline``). Both go through ``settle.settle_or_judge``: the cache,
prices, budget, servers and retries of every other call, and the new verdicts are cached.

This run's judge is the snapshot its model string answered as on a call of this run. It is
learned once per model string, on the first call the run must make anyway; when the run has none
to make but cached verdicts disagree (or the baseline is re-judged), one cached verdict is judged
again to learn it. Until it is known, nothing is stale: a call that fails leaves the verdicts as
they are, and the benchmark says ``mixed judges``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..execution.samples import sample_key
from ..judging.verdict import Outcome
from ..models.answered import Answered

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
    from ..execution.jobs import JudgeOnce
    from ..models.config import JudgeConfig
    from ..suite.files import Benchmark, Case
    from .host import Host, JudgedCase
    from .service import JudgingService
    from .settle import Ask

_PROBE = "\x00identity"  # the scheduler key suffix of the call that learns a judge's snapshot


def rejudging(host: Host) -> bool:
    """Whether this run judges stale cached verdicts again."""
    return host.settings.rejudge_stale or host.settings.rejudge_baseline


def answered_of(outcome: Outcome) -> Answered | None:
    """Who answered the call behind ``outcome`` (None: not known, or no answer)."""
    answer = outcome.verdict or outcome.pairwise
    return None if answer is None else answer.answered


def is_stale(host: Host, outcome: Outcome | None, config: JudgeConfig) -> bool:
    """A cached verdict another snapshot gave than the one ``config`` answers as in this run."""
    if outcome is None or not outcome.cached or not rejudging(host):
        return False
    now, was = host.resolved.get(config.model_name), answered_of(outcome)
    return now is not None and was is not None and was.model != now.model


def drop_stale(
    host: Host, asks: Sequence[Ask], settled: list[Outcome | None], kind: JudgeOnce[Any]
) -> list[Outcome | None]:
    """``settled`` with each stale cached verdict None (to be judged again), once this run's
    snapshot of its judge is known; a call made to learn it is settled with its answer."""
    if not rejudging(host):
        return settled
    settled = list(settled)
    for model in _judges_to_learn(host, asks, settled):
        index = _probe_index(asks, settled, model)
        settled[index] = _learn(host, asks[index], kind)
    return [None if is_stale(host, s, a.config) else s for a, s in zip(asks, settled, strict=True)]


def _judges_to_learn(host: Host, asks: Sequence[Ask], settled: Sequence[Outcome | None]) -> list[str]:
    """The model strings whose snapshot must be learned now: some of their cached verdicts know
    who answered, and the run calls them anyway, their cached verdicts disagree, or the baseline
    is re-judged."""
    hits: dict[str, set[str]] = {}
    calls: set[str] = set()
    for ask, outcome in zip(asks, settled, strict=True):
        model = ask.config.model_name
        if model in host.resolved:
            continue
        if outcome is None:
            calls.add(model)
        elif outcome.cached and (answered := answered_of(outcome)) is not None:
            hits.setdefault(model, set()).add(answered.model)
    return [
        model
        for model, seen in hits.items()
        if model in calls or len(seen) > 1 or host.settings.rejudge_baseline
    ]


def _probe_index(asks: Sequence[Ask], settled: Sequence[Outcome | None], model: str) -> int:
    """The ask whose call learns ``model``'s snapshot: one the run must make, else a cached one."""
    mine = [i for i, ask in enumerate(asks) if ask.config.model_name == model]
    return next((i for i in mine if settled[i] is None), mine[0])


def _learn(host: Host, ask: Ask, kind: JudgeOnce[Any]) -> Outcome:
    """``ask`` judged now (the main thread waits for it); its answer is this run's snapshot of
    its judge."""
    from .settle import prepared_call, send

    host.require_price(ask.config.model_name, ask.config.price)
    key = ask.key + _PROBE
    send(host, [(key, prepared_call(host, ask, kind))])
    assert host.scheduler is not None
    outcome = host.scheduler.result(key)
    if (answered := answered_of(outcome)) is not None:
        host.resolved[ask.config.model_name] = answered
    return outcome


@dataclass(frozen=True)
class Rejudged:
    """A case of this run with the baseline run's output in place of its own, to be judged."""

    nodeid: str
    benchmark: Benchmark
    case: Case
    request: CompiledRequest


def rejudge_outputs(service: JudgingService, cases: Sequence[JudgedCase]) -> dict[str, Outcome]:
    """Each case's outcome judged by this run's judge of its benchmark (its samples combined as
    the run's are), through the cache; a case whose judge cannot be set up is left out."""
    from ..execution.jobs import judge_job
    from ..judging.llmjudge import judge_once
    from ..models.judges import JudgeSetupError
    from .settle import Ask, sample_count, send, settle_or_judge

    asks: list[Ask] = []
    counts: dict[str, int] = {}
    for case in cases:
        try:
            config = service.judge_config(case)
        except JudgeSetupError:
            continue
        counts[case.nodeid] = sample_count(case.benchmark, service.settings)
        for index in range(counts[case.nodeid]):
            job = judge_job(case.benchmark.code, case.case.id, case.request, config, index, judge_once)
            asks.append(Ask(sample_key(case.nodeid, index), job, config))
    settled, pending = settle_or_judge(service, asks, judge_once)
    send(service, pending)
    found = {ask.key: s for ask, s in zip(asks, settled, strict=True) if s is not None}
    for key, _ in pending:
        assert service.scheduler is not None
        found[key] = service.scheduler.result(key)
    by_case = {c.nodeid: c for c in cases}
    outcomes: dict[str, Outcome] = {}
    for nodeid, repeats in counts.items():
        samples = [found[sample_key(nodeid, i)] for i in range(repeats)]
        combine, benchmark = service.combine, by_case[nodeid].benchmark
        outcomes[nodeid] = combine(benchmark, samples) if combine and repeats > 1 else samples[0]
    return outcomes
