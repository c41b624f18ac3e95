"""Cases from compiled request to ``Outcome``: cache, concurrency slot, retries, timeout.

``settle_from_cache`` decides every case the cache can, all in one lookup; ``judge_uncached``
judges each of the others, holding a concurrency slot while it calls the model.

Transient failures (rate limits, 5xx, timeouts, connection resets, output that does not
validate) retry with exponential backoff and jitter, honouring Retry-After, for a bounded
number of attempts; the last failure becomes the outcome. Others (401, 400) end at once.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, Protocol

from ..compile.pairwise import PairwiseRequest
from ..compile.request import CompiledRequest
from ..cost.spending import saved_cost
from ..judging.pairwise_verdict import PairwiseVerdict
from ..judging.verdict import JudgeFailure, Outcome, Usage, Verdict
from ..models.judges import UNNAMED_JUDGE
from ..models.redact import redact
from ..models.server_time import timed_call
from .cache import CachedVerdict, VerdictCache, cache_key
from .scheduler import Progress, Slots

if TYPE_CHECKING:
    from ..cost.pricing import Price
    from ..cost.spending import CallBudget


class JudgeCall(Protocol):
    """One attempt at judging a job's request (``CaseJob.request``, the only request it is given):
    a single request's call answers a Verdict, a pairwise request's (``judging.pairwise_judge``)
    a PairwiseVerdict; a failure raises ``JudgeFailure``."""

    def __call__(
        self, request: CompiledRequest | PairwiseRequest, /
    ) -> Awaitable[tuple[Verdict | PairwiseVerdict, Usage]]: ...


Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    timeout: float = 60.0
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_pause: float = 60.0  # the longest Retry-After honoured; a longer one ends the case as an ERROR

    def delay(self, attempt: int, failure: JudgeFailure, rng: random.Random) -> float:
        """Backoff before attempt ``attempt + 1``: Retry-After if given, else exponential with jitter."""
        if failure.retry_after is not None:
            return min(max(failure.retry_after, 0.0), self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return rng.uniform(ceiling / 2, ceiling)


def _usable_retry_after(failure: JudgeFailure, policy: RetryPolicy) -> JudgeFailure:
    """``failure`` with a Retry-After that can be honoured: NaN, infinite or negative values are
    dropped (normal backoff), and one longer than ``max_pause`` ends the case (no retry) rather
    than holding every request to that server for it."""
    wait = failure.retry_after
    if wait is None:
        return failure
    if not math.isfinite(wait) or wait < 0:
        return replace(failure, retry_after=None)
    if wait > policy.max_pause:
        message = f"{failure.message} (Retry-After {wait:g} s exceeds the {policy.max_pause:g} s cap)"
        return replace(failure, message=message, transient=False, retry_after=None)
    return failure


_JITTER = random.Random()  # backoff jitter; seeding one per call cost more than the rest of a call


async def _no_wait() -> None:
    return None


def _no_back_off(seconds: float) -> None:
    return None


_NO_ATTEMPT = JudgeFailure("judge-error", "no attempt was made")


async def judge_with_retries(
    request: CompiledRequest | PairwiseRequest,
    call: JudgeCall,
    policy: RetryPolicy,
    model_name: str,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
    pace: Callable[[], Awaitable[None]] = _no_wait,
    back_off: Callable[[float], None] = _no_back_off,
    budget: CallBudget | None = None,
) -> Outcome:
    """Judge ``request``; transient failures retry, the last failure ends as the outcome.

    ``pace`` is awaited before every attempt (requests-per-minute limit); a Retry-After is
    also passed to ``back_off`` so that other calls hold off too. With a ``budget`` each attempt
    reserves its projected cost right before its request and settles what it used; an attempt
    the budget refuses ends the case as a ``budget`` ERROR. Failed attempts' usage counts too.
    """
    rng = rng or _JITTER
    failure = _NO_ATTEMPT  # built once: every JudgeFailure is redacted, a copy of the environment
    retried: list[str] = []  # what each retry was for
    spent = _NO_USAGE  # what the failed attempts used (billed too), without their request count
    for attempt in range(1, policy.attempts + 1):
        await pace()
        reservation = await budget.admit() if budget is not None else None
        if budget is not None and reservation is None:  # never retried, never cached
            refused = JudgeFailure(budget.kind, budget.refusal())
            return Outcome(None, refused, model_name, False, attempt - 1, spent, retried=tuple(retried))
        used: Usage | None = None  # None: not known, a budget settles the projection
        try:
            async with asyncio.timeout(policy.timeout):  # no extra task per call, unlike wait_for
                verdict, usage = await call(request)
            used = usage
        except TimeoutError:
            failure = JudgeFailure("timeout", f"no answer within {policy.timeout:g} s", True)
        except JudgeFailure as exc:
            failure = exc
            used = exc.usage if exc.usage is not None or _maybe_billed(exc) else _NO_USAGE
        else:
            # a judge that repeats the key (or a credential it was shown) must not put it in every output
            verdict = replace(verdict, reason=redact(verdict.reason))
            return _answered(verdict, model_name, False, attempt, spent.plus(usage), tuple(retried))
        finally:
            if budget is not None and reservation is not None:
                budget.settle(reservation, used)
        if used is not None:
            spent = spent.plus(replace(used, requests=0))
        failure = _usable_retry_after(failure, policy)
        if not failure.transient or attempt == policy.attempts:
            return Outcome(None, failure, model_name, False, attempt, spent, retried=tuple(retried))
        retried.append(failure.kind)
        if failure.retry_after is not None:
            back_off(failure.retry_after)
        await sleep(policy.delay(attempt, failure, rng))
    return Outcome(None, failure, model_name, False, policy.attempts, spent, retried=tuple(retried))


def _maybe_billed(failure: JudgeFailure) -> bool:
    """Whether a failed attempt that reported no usage may still have been billed: a timeout or
    a broken connection may end a request the server processed; an HTTP error answer was not."""
    return not failure.kind.startswith("http-") and failure.kind not in _REFUSED_UNBILLED


_REFUSED_UNBILLED = frozenset({"rate-limited", "connection-refused", "rejected", "usage-limit"})


@dataclass(frozen=True)
class CaseJob:
    """Everything needed to judge one case, and the name it goes by in messages."""

    benchmark: str
    case_id: str
    request: CompiledRequest | PairwiseRequest
    call: JudgeCall
    model_name: str
    settings: Mapping[str, Any]
    sample: int = 0  # which of a case's repeated samples (each its own cache entry)
    endpoint: str = ""  # the server called: a Retry-After holds back only the calls to it
    price: Price | None = None  # of the judge's tokens: what a cache hit saved
    budget: CallBudget | None = None  # what each attempt reserves in the run's budget (None: no budget)

    @cached_property
    def cache_key(self) -> str:
        """Computed once: the lookup before scheduling and the write after the call share it."""
        return cache_key(self.request.digest, self.model_name, self.settings, self.sample)

    @cached_property
    def request_key(self) -> str:
        """The key without the model name: how a replay run that names no judge finds a verdict."""
        return cache_key(self.request.digest, UNNAMED_JUDGE, self.settings, self.sample)


def settle_from_cache(jobs: Sequence[CaseJob], cache: VerdictCache | None, mode: str) -> list[Outcome | None]:
    """The outcome of each job that the cache decides without the model, else None.

    Under ``use`` and ``replay`` a stored verdict is the outcome (looked up for all jobs in a few
    queries); under ``replay`` a miss is an error naming the case, as no model is ever called. A
    replay job of no named judge takes the one verdict stored for its request, whichever judge
    gave it; with verdicts of several judges it errors, naming them.
    """
    found: dict[str, CachedVerdict] = {}
    unnamed: dict[str, list[CachedVerdict]] = {}
    if cache is not None and mode in {"use", "replay"}:
        found = cache.get_many([job.cache_key for job in jobs if job.model_name != UNNAMED_JUDGE])
        if mode == "replay":
            unnamed = cache.get_unnamed([job.request_key for job in jobs if job.model_name == UNNAMED_JUDGE])
    outcomes: list[Outcome | None] = []
    for job in jobs:
        if job.model_name == UNNAMED_JUDGE:
            hits = unnamed.get(job.request_key, [])
            hit = hits[0] if len(hits) == 1 else None
        else:
            hits, hit = [], found.get(job.cache_key)
        if hit is not None:
            saved = saved_cost(job.price, hit.input_tokens, hit.output_tokens)
            outcomes.append(replace(_answered(hit.verdict, hit.model, True, 0), saved=saved))
        elif mode == "replay":
            outcomes.append(_replay_miss(job, cache, [h.model for h in hits]))
        else:
            outcomes.append(None)
    return outcomes


def _replay_miss(job: CaseJob, cache: VerdictCache | None, models: list[str]) -> Outcome:
    where = f" in {cache.path}" if cache is not None else ""
    case = f"{job.benchmark}::{job.case_id}"
    if models:
        message = (
            f"{case}: cached verdicts of {len(models)} judges for this request ({', '.join(models)}); "
            "name one with --llmjudge-model"
        )
    elif job.model_name == UNNAMED_JUDGE:
        message = (
            f"{case}: no cached verdict{where} for this request from any judge; replay mode makes no "
            "model calls. Record one with --llmjudge-cache=use and a judge model."
        )
    else:
        message = (
            f"{case}: no cached verdict{where} for this request and model {job.model_name}; replay "
            "mode makes no model calls. Record one with --llmjudge-cache=use."
        )
    return Outcome(None, JudgeFailure("cache-miss", message), job.model_name, False, 0)


async def judge_uncached(
    job: CaseJob,
    slots: Slots,
    policy: RetryPolicy,
    cache: VerdictCache | None,
    mode: str,
    sleep: Sleep = asyncio.sleep,
) -> Outcome:
    """Judge a case the cache did not settle: holds a concurrency slot while calling the model,
    then stores the verdict (never an error) unless ``mode`` is ``off``."""
    async with slots.hold(job.endpoint):
        started = time.perf_counter()
        with timed_call() as server:
            outcome = await judge_with_retries(
                job.request,
                job.call,
                policy,
                job.model_name,
                sleep,
                pace=partial(slots.pace, job.endpoint),
                back_off=partial(_back_off, slots, job.endpoint),
                budget=job.budget,
            )
        outcome = replace(outcome, latency=time.perf_counter() - started, model_latency=server.known)
    answer = outcome.verdict or outcome.pairwise
    if cache is not None and mode != "off" and answer is not None:
        cache.put(
            job.cache_key,
            answer,
            outcome.model,
            outcome.usage,
            job.benchmark,
            job.case_id,
            job.request_key,
        )
    return outcome


def _answered(
    answer: Verdict | PairwiseVerdict,
    model: str,
    cached: bool,
    attempts: int,
    usage: Usage | None = None,
    retried: tuple[str, ...] = (),
) -> Outcome:
    """The outcome carrying ``answer``: a verdict, or a pairwise request's answer."""
    usage = usage or _NO_USAGE
    if isinstance(answer, PairwiseVerdict):
        return Outcome(None, None, model, cached, attempts, usage, retried=retried, pairwise=answer)
    return Outcome(answer, None, model, cached, attempts, usage, retried=retried)


_NO_USAGE = Usage()


def _back_off(slots: Slots, endpoint: str, seconds: float) -> None:
    slots.back_off(seconds, endpoint)


def tally(outcome: Outcome, progress: Progress) -> None:
    """Count a finished case's error for the status line (cache hits never reach the scheduler)."""
    if outcome.failure is not None:
        progress.errors += 1
