"""LLMJudge's system prompt made to agree with the request's prompt style: it asks for JSON text
and for no reasoning process in the reason, and each style answers otherwise (the verdict tool,
or reasoning before the JSON), so each style's request says how it answers instead."""

from __future__ import annotations

from dataclasses import replace

from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, SystemPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

# LLMJudge's system prompt asks for JSON text and for no reasoning process in the reason; each
# style's request says instead how that style answers (replaced word for word).
_JSON_ANSWER = (
    "You respond with a JSON object with this structure: {reason: string, pass: boolean, score: number}"
)
_NO_REASONING = "Do not include your reasoning process, self-corrections, or re-checking in the reason. "
_TOOL_ANSWER = (
    "You answer through the verdict tool of this request, whose arguments have this structure: "
    "{reason: string, pass: boolean, score: number}"
)
_COT_ANSWER = (
    "You answer as the OUTPUT section of the rubric says: your reasoning first, then a JSON object "
    "with this structure: {reason: string, pass: boolean, score: number}"
)
_COT_REASON = "Your reasoning goes in the <reasoning> block before the JSON object, not in the reason. "


def one_voice(system_prompt: str, style: str, tool_output: bool) -> str:
    """LLMJudge's system prompt as sent for ``style``: nothing in it contradicts how that style
    answers (the verdict tool, JSON text, or reasoning before the JSON)."""
    if style != "no_reasoning":
        return system_prompt.replace(_JSON_ANSWER, _COT_ANSWER).replace(_NO_REASONING, _COT_REASON)
    return system_prompt.replace(_JSON_ANSWER, _TOOL_ANSWER) if tool_output else system_prompt


class OneVoiceModel(WrapperModel):
    """Sends LLMJudge's system prompt rewritten by ``one_voice`` for the request's style."""

    def __init__(self, wrapped: models.Model, style: str) -> None:
        super().__init__(wrapped)
        self.style = style

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        _, resolved = self.wrapped.prepare_request(model_settings, model_request_parameters)
        tool = resolved.output_mode == "tool"
        return await self.wrapped.request(
            as_sent(messages, self.style, tool), model_settings, model_request_parameters
        )


def as_sent(messages: list[ModelMessage], style: str, tool: bool) -> list[ModelMessage]:
    """``messages`` as ``OneVoiceModel`` sends them (what a call's length is counted of)."""
    return [_rewrite(m, style, tool) for m in messages]


def _rewrite(message: ModelMessage, style: str, tool: bool) -> ModelMessage:
    if not isinstance(message, ModelRequest):
        return message
    parts = [
        replace(p, content=one_voice(p.content, style, tool)) if isinstance(p, SystemPromptPart) else p
        for p in message.parts
    ]
    return replace(message, parts=parts)
