"""The judge's agent call, shared by single and pairwise requests: one pydantic-ai agent run whose
every response is billed, also when the run fails or its answer cannot be read; and the stand-in
model that captures what a judge is sent (the snapshots) without calling anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai import Agent, capture_run_messages, models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ..cost.spending import priced_usage
from ..models.classify import classify
from ..models.config import JudgeConfig
from .verdict import JudgeFailure, Usage

SNAPSHOT_MODEL_NAME = "snapshot"


@dataclass(frozen=True)
class AgentRun:
    """An agent run that answered: its output, its messages and what its responses used."""

    output: Any  # the run's output type: a verdict model, a pairwise answer or text
    messages: list[ModelMessage]
    usage: Usage
    response: ModelResponse


async def billed_run(
    agent: Agent[None, Any],
    prompt: Any,  # a user prompt (text or multimodal parts), or None to go on from a history
    config: JudgeConfig,
    model: models.Model,
    chars: Callable[[list[ModelMessage]], int],
    earlier_requests: int = 0,
    **options: Any,
) -> AgentRun:
    """``agent`` run on ``prompt`` with ``config``'s settings: each response priced on its own; a
    response without usage is counted from ``chars`` (the characters sent). ``earlier_requests``
    counts responses of a ``message_history`` sent before this run. A run that fails raises its
    ``JudgeFailure`` carrying what its responses used."""
    cause: Exception | None = None
    with capture_run_messages() as sent:
        try:
            result = await agent.run(prompt, model=model, model_settings=config.settings, **options)
        except Exception as exc:
            cause = exc
    if cause is not None:  # (raised out here: the context manager cannot set a frozen traceback)
        raise billed(classify(cause), priced_usage(config.price, responses(sent))) from cause
    messages = result.all_messages()
    requests = result.usage.requests + earlier_requests
    usage = priced_usage(config.price, responses(messages), requests, chars(messages))
    return AgentRun(result.output, messages, usage, result.response)


def billed(failure: JudgeFailure, usage: Usage) -> JudgeFailure:
    """``failure`` carrying ``usage`` (what the call's responses used, billed too) unless it
    carries its own, or the call had no response."""
    if failure.usage is not None or not usage.requests:
        return failure
    return replace(failure, usage=usage)


def responses(messages: Sequence[ModelMessage]) -> list[ModelResponse]:
    return [m for m in messages if isinstance(m, ModelResponse)]


Seen = Callable[[list[ModelMessage], AgentInfo], None]


def stand_in(answer: Mapping[str, Any], seen: Seen | None = None) -> FunctionModel:
    """A model that calls nothing: shows ``seen`` what it was sent, then answers ``answer``
    through the first output tool, or as JSON text when there is none."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if seen is not None:
            seen(messages, info)
        if info.output_tools:
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, dict(answer))])
        return ModelResponse(parts=[TextPart(json.dumps(answer))])

    return FunctionModel(respond, model_name=SNAPSHOT_MODEL_NAME)
