"""One path from a judge job to its outcome, for every pipeline: the verdict cache settles what
it can; every other call is priced (under a USD budget a model without a price stops the run),
sent to its judge's server (a local one started), reserves its projected cost in the run's
budget and retries under its judge's policy.

``settle_or_judge`` does it for jobs known when cases are scheduled (one cache lookup for all;
the rest become scheduler jobs), ``settle_or_judge_now`` for one job inside a job already
running (a task just produced the output). The request kind (``execution.jobs.JudgeOnce``) is a
parameter: single and pairwise requests, and every member of a panel, take the same path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ..execution.projection import judge_budget
from ..judging.checks import checked_outcome
from ..judging.verdict import Outcome

if TYPE_CHECKING:
    from ..execution.cache import VerdictCache
    from ..execution.jobs import JudgeOnce
    from ..execution.retries import CaseJob, RetryPolicy
    from ..execution.scheduler import Job, Slots
    from ..models.config import JudgeConfig
    from ..suite.files import Benchmark
    from ..suite.settings import RunSettings
    from .host import Host, JudgedCase

DEFAULT_TIMEOUT = 60.0  # seconds a judge call may take, unless its configuration says otherwise


@dataclass(frozen=True)
class Ask:
    """One judge call to settle or make: its scheduler key, its job and the judge asked."""

    key: str
    job: CaseJob
    config: JudgeConfig


def settle_or_judge(
    host: Host, asks: Sequence[Ask], kind: JudgeOnce[Any]
) -> tuple[list[Outcome | None], list[tuple[str, Job[Outcome]]]]:
    """Each ask's outcome when the cache settles it now (counted in ``host.cache_hits``), else
    None; and the scheduler jobs that judge the others (start them with ``send``). Raises
    ``JudgeSetupError`` for a damaged cache, an unpriced model under a USD budget or a local
    server that cannot start."""
    from ..execution.cache import CacheError
    from ..execution.retries import settle_from_cache
    from ..models.judges import JudgeSetupError
    from .rejudge import drop_stale

    cache, mode = host.verdict_cache(), host.settings.cache
    try:
        settled_now = settle_from_cache([ask.job for ask in asks], cache, mode)
    except CacheError as exc:  # damage found only when read
        raise JudgeSetupError(f"--llmjudge-cache-path: {exc}") from None
    learn = partial(_judge_now, host, asks, kind)
    settled_now = drop_stale(host, [a.config for a in asks], settled_now, learn)  # --llmjudge-rejudge-stale
    pending: list[tuple[str, Job[Outcome]]] = []
    for ask, settled in zip(asks, settled_now, strict=True):
        if settled is not None:
            host.cache_hits += settled.cached
            continue
        host.require_price(ask.config.model_name, ask.config.price)
        pending.append((ask.key, prepared_call(host, ask, kind)))
    return settled_now, pending


def _judge_now(host: Host, asks: Sequence[Ask], kind: JudgeOnce[Any], index: int) -> Outcome:
    """``asks[index]`` judged now, the main thread waiting (it learns who answers its judge)."""
    ask = asks[index]
    host.require_price(ask.config.model_name, ask.config.price)
    key = ask.key + "\x00now"
    send(host, [(key, prepared_call(host, ask, kind))])
    assert host.scheduler is not None
    return host.scheduler.result(key)


def prepared_call(host: Host, ask: Ask, kind: JudgeOnce[Any]) -> Job[Outcome]:
    """The scheduler job that judges ``ask`` and caches its verdict (its judge's server started)."""
    from ..execution.retries import judge_uncached

    cache, mode = host.verdict_cache(), host.settings.cache
    job, policy = _ready(host, ask.job, host.judges.with_server(ask.config), kind, cache)
    return partial(judge_uncached, job, policy=policy, cache=cache, mode=mode)


def send(host: Host, jobs: list[tuple[str, Job[Outcome]]]) -> None:
    """Start ``jobs`` on the scheduler, what a judge call imports loaded first (main thread)."""
    from ..judging.preload import load_judging

    if jobs:
        load_judging()
        host.start_jobs(jobs)


async def settle_or_judge_now(
    host: Host, job: CaseJob, config: JudgeConfig, kind: JudgeOnce[Any], slots: Slots
) -> Outcome:
    """One job's outcome, inside a running job: from the cache, else judged by ``config`` (its
    price checked and its server started when the job was planned), holding a slot only while
    calling."""
    from ..execution.retries import judge_uncached, settle_from_cache
    from .rejudge import is_stale

    cache, mode = host.verdict_cache(), host.settings.cache
    settled = settle_from_cache([job], cache, mode)[0]
    if settled is not None and not is_stale(host, settled, config):  # --llmjudge-rejudge-stale
        return settled
    job, policy = _ready(host, job, config, kind, cache)
    return await judge_uncached(job, slots, policy=policy, cache=cache, mode=mode)


def _ready(
    host: Host, job: CaseJob, config: JudgeConfig, kind: JudgeOnce[Any], cache: VerdictCache | None
) -> tuple[CaseJob, RetryPolicy]:
    """``job`` calling ``config`` through ``kind``, with its budget, and its retry policy."""
    from ..execution.retries import RetryPolicy
    from ..models.judges import endpoint

    budget = judge_budget(host.spending, job.request, job.benchmark, config, cache)
    job = replace(job, call=partial(kind, config=config), endpoint=endpoint(config.model), budget=budget)
    # each configuration its own timeout: a benchmark's judge.timeout is not capped by the run's
    timeout = config.settings.get("timeout", DEFAULT_TIMEOUT)
    return job, RetryPolicy(attempts=host.settings.attempts, timeout=timeout)


def checks_decide(case: JudgedCase) -> Outcome | None:
    """The outcome of a ``code`` case, or of a ``hybrid`` one whose checks fail (the judge is not
    asked); None when the judge decides."""
    kind = case.benchmark.spec.evaluator_type
    if kind not in {"code", "hybrid"}:
        return None
    checked = checked_outcome(case)
    if kind == "code" or not checked.verdict or not checked.verdict.passed:
        return checked
    return None


def sample_count(benchmark: Benchmark, settings: RunSettings) -> int:
    """How many times a benchmark's cases are judged: its ``judge.repeats``, else the run's."""
    from ..suite.settings import judge_setting

    return int(judge_setting(benchmark, settings, "repeats"))
