"""The judge job of one sample of a case: what the cache is asked and the scheduler runs."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..judging.llmjudge import judge_once
from ..models.config import JudgeConfig
from ..models.judges import endpoint
from .retries import CaseJob


def judge_job(case: Any, config: JudgeConfig, sample: int) -> CaseJob:
    """Sample ``sample`` of ``case`` (a ``service.CaseToJudge``) judged by ``config``."""
    return CaseJob(
        case.benchmark.code,
        case.case.id,
        case.request,
        partial(judge_once, config=config),
        config.model_name,
        config.settings,
        sample,
        endpoint=endpoint(config.model),
        price=config.price,
    )
