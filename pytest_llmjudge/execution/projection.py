"""What one judge call reserves in the run's budget: the cost and tokens projected from the text
its request sends (``sent_text_of``), as the estimate counts them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..compile.pairwise import PairwiseRequest
    from ..compile.request import CompiledRequest
    from ..cost.pricing import Price
    from ..cost.spending import CallBudget, Spending
    from ..cost.tokens import ModelTokens
    from ..models.config import JudgeConfig
    from .cache import VerdictCache


def judge_budget(
    spending: Spending,
    request: CompiledRequest | PairwiseRequest,
    benchmark: str,
    config: JudgeConfig,
    cache: VerdictCache | None,
) -> CallBudget | None:
    """What each attempt to judge ``request`` reserves (None: the run has no budget)."""
    if spending.limit is None:
        return None
    tokens = judge_tokens(
        spending,
        benchmark,
        config.model_name,
        config.price,
        style=request.prompt_style,
        max_tokens=config.settings.get("max_tokens"),
        cache=cache,
    )
    return spending.call_budget(tokens, sent_text_of(request))


def sent_text_of(request: CompiledRequest | PairwiseRequest) -> str:
    """The text a judge request sends, counted as ``llmjudge.sent_text`` counts a call's: a single
    request's, or one order of a pairwise request (its system prompt, instructions, prompt and
    verdict schema)."""
    from ..compile.pairwise import PairwiseRequest, pairwise_user_prompt
    from ..judging.rendering import request_text

    if not isinstance(request, PairwiseRequest):
        return request_text(request)
    from ..judging.pairwise_judge import output_tools

    texts = [request.instructions] if request.instructions else []
    texts += [request.system_prompt, pairwise_user_prompt(request)]
    texts += [json.dumps(dict(schema)) for _, schema in output_tools(request)]
    return "\n".join(texts)


def judge_tokens(
    spending: Spending,
    benchmark: str,
    label: str,
    price: Price | None,
    *,
    style: str,
    max_tokens: int | None,
    cache: VerdictCache | None,
) -> ModelTokens:
    """``Spending.model_tokens`` of a judge, from the verdict cache's earlier calls of the model."""
    from ..cost.spending import DEFAULT_OUTPUT_TOKENS
    from .cache import output_history, token_history

    return spending.model_tokens(
        benchmark,
        label,
        price,
        default_output=DEFAULT_OUTPUT_TOKENS.get(style, DEFAULT_OUTPUT_TOKENS["no_reasoning"]),
        max_tokens=max_tokens,
        calls=(lambda: token_history(cache, label)) if cache is not None else tuple,
        outputs=(lambda: output_history(cache, benchmark, label)) if cache is not None else tuple,
    )
