"""The pairwise judge call: one pydantic-ai agent call per order of a pairwise request.

LLMJudge has no pairwise agent, so a pairwise request gets its own: the system prompt of
``compile.pairwise`` for the request's style, the prompt file's SYSTEM section as instructions,
and ``PairwiseAnswer`` as the output type (``{winner: "A" | "B" | "tie", reason}`` through the
verdict tool). Chain-of-thought styles answer in text, read here: reasoning blocks stripped, then
the last JSON object with a ``winner``. Failures are classified as single calls' are
(``classify.classify``), so retries, ERROR items and the cache treat both shapes alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ..compile.pairwise import PairwiseRequest, pairwise_user_prompt, render_pairwise_messages
from ..cost.spending import priced_usage
from ..models.classify import classify
from ..models.config import JudgeConfig
from ..models.identity import answered_by
from .llmjudge import OUTPUT_RETRIES
from .pairwise_verdict import PairwiseAnswer, PairwiseVerdict
from .rendering import run_sync
from .verdict import JudgeFailure, Usage
from .verdict_text import strip_reasoning

AGENT_NAME = "pairwise_judge"
_AGENTS: dict[str, Agent[None, Any]] = {}  # system prompt -> its agent (one per prompt style)


def _agent(request: PairwiseRequest) -> Agent[None, Any]:
    agent = _AGENTS.get(request.system_prompt)
    if agent is None:
        agent = Agent(name=AGENT_NAME, system_prompt=request.system_prompt)
        _AGENTS[request.system_prompt] = agent
    return agent


async def judge_pair_once(request: PairwiseRequest, config: JudgeConfig) -> tuple[PairwiseVerdict, Usage]:
    """One pairwise judge call (with pydantic-ai's bounded output-validation retries); raises
    ``JudgeFailure``."""
    try:
        return await _judge_pair(request, config)
    except Exception as exc:  # every failure becomes an ERROR item, never a crash
        raise classify(exc) from exc


async def _judge_pair(request: PairwiseRequest, config: JudgeConfig) -> tuple[PairwiseVerdict, Usage]:
    text = request.prompt_style != "no_reasoning"
    output_type: Any = str if text else PairwiseAnswer
    result = await _agent(request).run(
        pairwise_user_prompt(request),
        model=config.model,
        model_settings=config.settings,
        output_type=output_type,
        instructions=request.instructions or None,
        retries=OUTPUT_RETRIES,
    )
    # each response priced on its own (``spending.priced_usage``), as a single request's are; a
    # response without usage is counted from the characters sent (the first request's) and answered
    from .sent_text import sent_text

    messages = result.all_messages()
    responses = [m for m in messages if isinstance(m, ModelResponse)]
    chars = len(sent_text(messages[:1], [json.dumps(dict(schema)) for _, schema in output_tools(request)]))
    spent = priced_usage(config.price, responses, result.usage.requests, chars)
    answer = result.output.to_verdict() if isinstance(result.output, PairwiseAnswer) else None
    answer = answer or read_pairwise_text(str(result.output))
    return replace(answer, answered=answered_by(messages)), spent


def read_pairwise_text(text: str | None) -> PairwiseVerdict:
    """The answer of a chain-of-thought pairwise reply: the last JSON object naming a ``winner``
    after the reasoning blocks; ``JudgeFailure`` (retried) when there is none."""
    answer, _ = strip_reasoning(text or "")
    decoder = json.JSONDecoder()
    found: Any = None
    position = answer.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(answer, position)
        except json.JSONDecodeError:
            position = answer.find("{", position + 1)
            continue
        if isinstance(value, dict) and "winner" in value:
            found = value
        position = answer.find("{", end)
    if found is None:
        raise JudgeFailure("format_error", "no JSON object with a winner in the answer", True)
    try:
        return PairwiseVerdict.from_json({"winner": found.get("winner"), "reason": found.get("reason")})
    except TypeError as exc:
        raise JudgeFailure("invalid_value", str(exc), True) from None


def _snapshot_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    args = {"winner": "tie", "reason": "snapshot"}
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
    return ModelResponse(parts=[TextPart(json.dumps(args))])


_TOOLS: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}  # style -> the output tools sent


def output_tools(request: PairwiseRequest) -> list[tuple[str, Mapping[str, Any]]]:
    """The verdict tool (name, JSON schema) pydantic-ai sends with ``request``'s style; none for
    text styles."""
    style = request.prompt_style
    if style not in _TOOLS:
        seen: list[tuple[str, Mapping[str, Any]]] = []

        def capture(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.extend((t.name, t.parameters_json_schema) for t in info.output_tools)
            return _snapshot_answer(messages, info)

        run_sync(
            _agent(request).run(
                pairwise_user_prompt(request),
                model=FunctionModel(capture, model_name="snapshot"),
                output_type=str if style != "no_reasoning" else PairwiseAnswer,
                instructions=request.instructions or None,
            )
        )
        _TOOLS[style] = seen
    return _TOOLS[style]


def render_pair(request: PairwiseRequest) -> str:
    """The messages and output schema of a pairwise request as readable text (the snapshot)."""
    return render_pairwise_messages(request, output_tools(request))
