"""What one judge call reserves in the run's budget: the cost and tokens projected from the text
its request sends (``llmjudge.request_text``), as the estimate counts them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .cache import VerdictCache
    from .llmjudge import JudgeConfig
    from .spending import CallBudget, Spending


def judge_budget(
    spending: Spending, request: object, benchmark: str, config: JudgeConfig, cache: VerdictCache | None
) -> CallBudget | None:
    """What each attempt to judge ``request`` reserves (None: the run has no budget)."""
    from ..compile.request import CompiledRequest

    if spending.limit is None or not isinstance(request, CompiledRequest):
        return None
    from .llmjudge import request_text

    tokens = spending.judge_tokens(
        benchmark,
        config.model_name,
        config.price,
        style=request.prompt_style,
        max_tokens=config.settings.get("max_tokens"),
        cache=cache,
    )
    return spending.call_budget(tokens, request_text(request))
