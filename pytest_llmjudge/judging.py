"""One case from compiled request to ``Outcome``: retries with backoff, per-call timeout."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .compile import CompiledRequest
from .verdict import JudgeFailure, Outcome, Usage, Verdict

JudgeCall = Callable[[CompiledRequest], Awaitable[tuple[Verdict, Usage]]]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    timeout: float = 60.0
    base_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, failure: JudgeFailure, rng: random.Random) -> float:
        """Backoff before attempt ``attempt + 1``: Retry-After if given, else exponential with jitter."""
        if failure.retry_after is not None:
            return min(max(failure.retry_after, 0.0), self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return rng.uniform(ceiling / 2, ceiling)


async def judge_with_retries(
    request: CompiledRequest,
    call: JudgeCall,
    policy: RetryPolicy,
    model_name: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
) -> Outcome:
    """Judge ``request``; transient failures retry, the last failure ends as the outcome."""
    rng = rng or random.Random()
    requests = input_tokens = output_tokens = 0
    failure = JudgeFailure("judge-error", "no attempt was made")
    for attempt in range(1, policy.attempts + 1):
        try:
            verdict, usage = await asyncio.wait_for(call(request), timeout=policy.timeout)
        except TimeoutError:
            failure = JudgeFailure("timeout", f"no answer within {policy.timeout:g} s", True)
        except JudgeFailure as exc:
            failure = exc
        else:
            requests += usage.requests
            input_tokens += usage.input_tokens
            output_tokens += usage.output_tokens
            return Outcome(verdict, None, model_name, False, attempt, Usage(requests, input_tokens, output_tokens))
        if not failure.transient or attempt == policy.attempts:
            return Outcome(None, failure, model_name, False, attempt)
        await sleep(policy.delay(attempt, failure, rng))
    return Outcome(None, failure, model_name, False, policy.attempts)
