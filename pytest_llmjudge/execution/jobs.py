"""The judge job of one sample of one request: what the cache is asked and the scheduler runs.

A request kind is the call that judges one request once: ``judging.llmjudge.judge_once`` for a
single request, ``judging.pairwise_judge.judge_pair_once`` for one order of a pairwise request.
"""

from __future__ import annotations

from collections.abc import Awaitable
from functools import partial
from typing import Protocol, TypeVar

from ..compile.pairwise import PairwiseRequest
from ..compile.request import CompiledRequest
from ..judging.pairwise_verdict import PairwiseVerdict
from ..judging.verdict import Usage, Verdict
from ..models.config import JudgeConfig
from ..models.judges import endpoint
from .retries import CaseJob

R = TypeVar("R", CompiledRequest, PairwiseRequest, contravariant=True)
Answer = tuple[Verdict | PairwiseVerdict, Usage]
RequestT = TypeVar("RequestT", CompiledRequest, PairwiseRequest)


class JudgeOnce(Protocol[R]):
    """A request kind: one judge call for one request (raises ``JudgeFailure``)."""

    def __call__(
        self, request: R, config: JudgeConfig
    ) -> Awaitable[tuple[Verdict | PairwiseVerdict, Usage]]: ...


def judge_job(
    benchmark: str,
    case_id: str,
    request: RequestT,
    config: JudgeConfig,
    sample: int,
    kind: JudgeOnce[RequestT],
) -> CaseJob:
    """Sample ``sample`` of ``request`` (case ``case_id`` of ``benchmark``) judged by ``config``."""
    return CaseJob(
        benchmark,
        case_id,
        request,
        partial(kind, config=config),
        config.model_name,
        config.settings,
        sample,
        endpoint=endpoint(config.model),
        price=config.price,  # what a cache hit saved
    )
