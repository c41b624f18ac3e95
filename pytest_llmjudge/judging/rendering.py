"""The exact messages and output schema the judge is sent for a compiled request, as readable text
(the ``::prompt`` snapshots and ``llmjudge compile``), captured through a stand-in model that
never calls anything."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.tools import ToolDefinition

from ..compile.request import CompiledRequest
from ..models.config import RequestTemplate
from .agent_call import stand_in
from .llmjudge import (
    JudgeVerdict,
    _agent,
    _template_key,
    capture_template,
    user_prompt,
)
from .one_voice import OneVoiceModel
from .sent_text import sent_text

SNAPSHOT_ANSWER = {"reason": "snapshot", "pass": True}  # what the stand-in model answers
_SNAPSHOT_MODEL = stand_in(SNAPSHOT_ANSWER)
_SNAPSHOT_TEMPLATES: dict[tuple[str, str], tuple[RequestTemplate, list[ToolDefinition]] | None] = {}


T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, also when this thread already runs an event loop (a browser-testing plugin
    or an async test runner in the same pytest session): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def render_messages(request: CompiledRequest) -> str:
    """The exact messages and output schema the judge model is sent, as readable text."""
    messages, tools = _sent(request)
    return _format_request(messages, _schema_lines(tools))


def request_text(request: CompiledRequest) -> str:
    """The text the judge is sent for ``request`` (``sent_text``): what the estimate and a
    budget's projection count tokens of, as each call records its own length."""
    messages, tools = _sent(request)
    return sent_text(messages, [json.dumps(tool.parameters_json_schema) for tool in tools])


def _sent(request: CompiledRequest) -> tuple[list[ModelMessage], list[ToolDefinition]]:
    """The messages and output tools the judge model is sent for ``request``."""
    if request.prompt_style != "no_reasoning":
        return _through_agent(request)  # text answers: no output schema
    key = _template_key(request)
    if key not in _SNAPSHOT_TEMPLATES:
        template = run_sync(capture_template(request, _SNAPSHOT_MODEL, None))
        if template is None:
            _SNAPSHOT_TEMPLATES[key] = None
        else:
            _, params = _SNAPSHOT_MODEL.prepare_request(template.settings, template.params)
            _SNAPSHOT_TEMPLATES[key] = (template, params.output_tools)
    found = _SNAPSHOT_TEMPLATES[key]
    if found is None:
        return _through_agent(request)
    template, tools = found
    return template.messages(user_prompt(request)), tools


def _through_agent(request: CompiledRequest) -> tuple[list[ModelMessage], list[ToolDefinition]]:
    captured: dict[str, Any] = {}

    def capture(messages: list[ModelMessage], info: AgentInfo) -> None:
        captured["messages"] = messages
        captured["info"] = info

    model = stand_in(SNAPSHOT_ANSWER, capture)
    prompt = user_prompt(request)
    run_sync(
        _agent().run(
            prompt,
            model=OneVoiceModel(model, request.prompt_style),
            output_type=JudgeVerdict if request.prompt_style == "no_reasoning" else str,
            instructions=request.instructions or None,
        )
    )
    return captured["messages"], captured["info"].output_tools


def _schema_lines(output_tools: list[ToolDefinition]) -> list[str]:
    lines: list[str] = []
    for tool in output_tools:
        schema = _indented(json.dumps(tool.parameters_json_schema, sort_keys=True))
        lines += [f"=== output schema ({tool.name}) ===", schema]
    return lines


@functools.lru_cache(maxsize=64)
def _indented(schema: str) -> str:
    """The JSON ``schema`` indented for reading (a benchmark's cases share one schema: indenting
    is pure Python, compact JSON is not)."""
    return json.dumps(json.loads(schema), indent=2, sort_keys=True)


def _format_request(messages: list[ModelMessage], schema: list[str]) -> str:
    lines: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest) and message.instructions:
            lines += ["=== instructions ===", message.instructions.strip()]
        for part in message.parts:
            content = getattr(part, "content", "")  # request parts of other kinds carry none
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            lines += [f"=== {part.part_kind} ===", text.strip()]
    return "\n".join([*lines, *schema]) + "\n"
