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
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from ..compile.pairwise import PairwiseRequest, pairwise_user_prompt, render_pairwise_messages
from ..models.classify import classify
from ..models.config import JudgeConfig
from ..models.identity import answered_by
from .agent_call import billed, billed_run, stand_in
from .llmjudge import OUTPUT_RETRIES
from .pairwise_verdict import PairwiseAnswer, PairwiseVerdict
from .rendering import run_sync
from .verdict import JudgeFailure, Usage
from .verdict_text import json_candidates, strip_reasoning

AGENT_NAME = "pairwise_judge"
SNAPSHOT_ANSWER = {"winner": "tie", "reason": "snapshot"}  # what the stand-in model answers
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
    from .sent_text import sent_text

    schemas = [json.dumps(dict(schema)) for _, schema in output_tools(request)]
    ran = await billed_run(
        _agent(request),
        pairwise_user_prompt(request),
        config,
        config.model,
        lambda messages: len(sent_text(messages[:1], schemas)),
        output_type=str if request.prompt_style != "no_reasoning" else PairwiseAnswer,
        instructions=request.instructions or None,
        retries=OUTPUT_RETRIES,
    )
    if isinstance(ran.output, PairwiseAnswer):
        answer = ran.output.to_verdict()
    else:
        try:
            answer = read_pairwise_text(str(ran.output))
        except JudgeFailure as failure:  # an answer that cannot be read was made, and is billed
            raise billed(failure, ran.usage) from None
    return replace(answer, answered=answered_by(ran.messages)), ran.usage


def read_pairwise_text(text: str | None) -> PairwiseVerdict:
    """The answer of a chain-of-thought pairwise reply: the last JSON object naming a ``winner``
    after the reasoning blocks; ``JudgeFailure`` (retried) when there is none."""
    answer, _ = strip_reasoning(text or "")
    found: dict[str, Any] | None = None
    for _, value, _ in json_candidates(answer):
        if value is not None and "winner" in value:
            found = value
    if found is None:
        raise JudgeFailure("format_error", "no JSON object with a winner in the answer", True)
    try:
        return PairwiseVerdict.from_json({"winner": found.get("winner"), "reason": found.get("reason")})
    except TypeError as exc:
        raise JudgeFailure("invalid_value", str(exc), True) from None


_TOOLS: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}  # style -> the output tools sent


def output_tools(request: PairwiseRequest) -> list[tuple[str, Mapping[str, Any]]]:
    """The verdict tool (name, JSON schema) pydantic-ai sends with ``request``'s style; none for
    text styles."""
    style = request.prompt_style
    if style not in _TOOLS:
        seen: list[tuple[str, Mapping[str, Any]]] = []

        def capture(messages: list[ModelMessage], info: AgentInfo) -> None:
            seen.extend((t.name, t.parameters_json_schema) for t in info.output_tools)

        run_sync(  # the tools depend on the output type alone: any prompt will do
            _agent(request).run(
                "",
                model=stand_in(SNAPSHOT_ANSWER, capture),
                output_type=str if style != "no_reasoning" else PairwiseAnswer,
            )
        )
        _TOOLS[style] = seen
    return _TOOLS[style]


def render_pair(request: PairwiseRequest) -> str:
    """The messages and output schema of a pairwise request as readable text (the snapshot)."""
    return render_pairwise_messages(request, output_tools(request))
