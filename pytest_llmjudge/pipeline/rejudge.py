"""One judge per gate: cached verdicts that another resolved snapshot gave are judged again by
this run's judge (``--llmjudge-rejudge-stale``), and a baseline run's stored outputs are judged
by it (``--llmjudge-rejudge-baseline``). Both go through ``settle.settle_or_judge``: the cache,
prices, budget, servers and retries of every other call, and the new verdicts are cached.

The baseline's outputs are judged by ``rejudge_outputs``.

This run's judge is the snapshot its model string answered as on a call of this run. It is
learned once per model string, on the first call the run must make anyway; when the run has none
to make but cached verdicts disagree (or the baseline is re-judged), one cached verdict is judged
again to learn it. Until it is known, nothing is stale: a call that fails leaves the verdicts as
they are, and the benchmark says ``mixed judges``. A replay calls no model and a batched run
cannot wait for one call, so neither re-judges: their mixed benchmarks say so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..judging.verdict import Outcome
from ..models.answered import Answered

if TYPE_CHECKING:
    from ..models.config import JudgeConfig
    from .host import Host


def rejudging(host: Host) -> bool:
    """Whether this run judges stale cached verdicts again: not in a replay (no model is called),
    nor in a batched run (learning who answers would wait for a whole batch)."""
    settings = host.settings
    calls = settings.cache != "replay" and settings.batch == "off"
    return calls and (settings.rejudge_stale or settings.rejudge_baseline)


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
    host: Host,
    configs: Sequence[JudgeConfig],
    settled: list[Outcome | None],
    judge_now: Callable[[int], Outcome],
) -> list[Outcome | None]:
    """``settled`` (the cache's outcome of each call of a judge of ``configs``) with each stale
    cached verdict None (to be judged again), once this run's snapshot of its judge is known. To
    learn it, ``judge_now(index)`` judges one call now; it is settled with its answer."""
    if not rejudging(host):
        return settled
    settled = list(settled)
    for model in _judges_to_learn(host, configs, settled):
        index = _probe_index(configs, settled, model)
        settled[index] = outcome = judge_now(index)
        if (answered := answered_of(outcome)) is not None:
            host.resolved[model] = answered
    return [None if is_stale(host, s, c) else s for c, s in zip(configs, settled, strict=True)]


def _judges_to_learn(
    host: Host, configs: Sequence[JudgeConfig], settled: Sequence[Outcome | None]
) -> list[str]:
    """The model strings whose snapshot must be learned now: some of their cached verdicts know
    who answered, and the run calls them anyway, their cached verdicts disagree, or the baseline
    is re-judged."""
    hits: dict[str, set[str]] = {}
    calls: set[str] = set()
    for config, outcome in zip(configs, settled, strict=True):
        model = config.model_name
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


def _probe_index(configs: Sequence[JudgeConfig], settled: Sequence[Outcome | None], model: str) -> int:
    """The call that learns ``model``'s snapshot: one the run must make, else a cached one."""
    mine = [i for i, config in enumerate(configs) if config.model_name == model]
    return next((i for i in mine if settled[i] is None), mine[0])
