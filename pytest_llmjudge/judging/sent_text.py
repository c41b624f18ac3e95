"""The text of a judge request as a call sends it: what a call's characters-per-token ratio, the
estimate and a budget's projection count."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.models import ModelRequestParameters


def output_schemas(params: ModelRequestParameters) -> tuple[str, ...]:
    """The output schemas a request sends, as JSON: each output tool's, or the native output's
    (the provider counts them as input tokens)."""
    schemas = [tool.parameters_json_schema for tool in params.output_tools]
    if params.output_mode == "native" and params.output_object is not None:
        schemas.append(params.output_object.json_schema)
    return tuple(json.dumps(schema) for schema in schemas)


def sent_text(messages: Sequence[ModelMessage], schemas: Sequence[str]) -> str:
    """The text of a judge request: the first request's instructions and parts, and its output
    schemas (``output_schemas``). Its length over the input tokens a call reports is the model's
    characters per token (the verdict cache keeps both)."""
    texts: list[str] = []
    for message in messages[:1]:
        if isinstance(message, ModelRequest):
            if message.instructions:
                texts.append(message.instructions)
            for part in message.parts:
                content = getattr(part, "content", "")
                texts.append(content if isinstance(content, str) else json.dumps(content, default=str))
    return "\n".join([*texts, *schemas])
