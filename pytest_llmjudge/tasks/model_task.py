"""A model as a task: ``task: {model: ..., prompt_file: ...}``. The prompt template is rendered
from the case's fields (few-shot examples included), sent through pydantic-ai, and the answer is
text, or structured output with ``output_schema``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..suite.files import Case
from ..suite.hashing import canonical_json, digest
from .few_shot import Example, FewShotConfig, select_examples
from .fields import case_fields
from .prompt_template import PromptTemplate, RenderedMessage, render_messages


@dataclass(frozen=True)
class TaskRequest:
    """What a model task sends for one case: the rendered messages, and which examples they show."""

    messages: tuple[RenderedMessage, ...]
    examples: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"messages": [[m.role, m.content] for m in self.messages], "examples": list(self.examples)}


@dataclass(frozen=True)
class ModelTask:
    label: str  # the model's label, as the judge's (``judge_label``): no credentials in it
    settings: str  # canonical JSON of the model settings (``client_parameters``, then ``settings``)
    template: PromptTemplate
    output_schema: str | None  # canonical JSON of the schema, or None for a text answer
    few_shot: FewShotConfig | None
    pool: tuple[Example, ...]  # the labelled cases few-shot examples come from
    sees_ground_truth: bool
    version: str | None = None

    @property
    def fingerprint(self) -> str:
        """The task without the case: the model, its settings, the template, the few-shot rule."""
        return digest(
            {
                "kind": "model",
                "model": self.label,
                "settings": self.settings,
                "template": self.template.digest,
                "few_shot": self.few_shot.fingerprint() if self.few_shot else None,
                "output_schema": self.output_schema,
                "version": self.version,
            }
        )

    def request(self, benchmark: str, case: Case) -> TaskRequest:
        """The rendered request for ``case``; raises ``TemplateFieldError`` or ``FewShotError``."""
        fields = case_fields(benchmark, case, self.sees_ground_truth)
        examples: tuple[Example, ...] = ()
        if self.few_shot is not None and self.few_shot.shots:
            examples = select_examples(self.few_shot, self.pool, case.id)
        return TaskRequest(render_messages(self.template, fields, examples), tuple(e.id for e in examples))

    def model_settings(self) -> dict[str, Any]:
        return dict(json.loads(self.settings))


def settings_json(client_parameters: Mapping[str, Any], settings: Mapping[str, Any] | None) -> str:
    """A model task's settings: the prompt file's ``client_parameters``, overridden by ``settings``."""
    return canonical_json({**client_parameters, **(settings or {})})


async def ask_model(
    model: Any, request: TaskRequest, settings: Mapping[str, Any], output_schema: str | None
) -> tuple[Any, list[Any], list[Any]]:
    """Send ``request`` to ``model`` (a pydantic-ai model); returns the answer, its responses
    (pydantic-ai's ``ModelResponse``: each is priced on its own, from its usage, at the batch rate
    when its ``provider_details`` say ``processing: batch``) and the messages of the call (whose
    responses name the model that answered). A batched model's suspended response is checked on
    by the agent run until its batch answers. System
    messages become the instructions; the last user message is the prompt and the messages before
    it (few-shot turns) the history."""
    from pydantic_ai import Agent, StructuredDict
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.settings import ModelSettings

    system = "\n\n".join(m.content for m in request.messages if m.role == "system")
    turns = [m for m in request.messages if m.role != "system"]
    prompt = turns[-1].content if turns and turns[-1].role == "user" else ""
    history: list[ModelMessage] = []
    for message in turns[:-1] if prompt else turns:
        if message.role == "assistant":
            history.append(ModelResponse(parts=[TextPart(message.content)]))
        else:
            history.append(ModelRequest(parts=[UserPromptPart(message.content)]))
    output_type: Any = str
    if output_schema is not None:
        output_type = StructuredDict(json.loads(output_schema), name="answer")
    agent = Agent(model, output_type=output_type, instructions=system or None, retries=0)
    model_settings = cast(ModelSettings, dict(settings))
    result = await agent.run(prompt, message_history=history or None, model_settings=model_settings)
    messages = result.new_messages()
    return result.output, [m for m in messages if isinstance(m, ModelResponse)], messages


def messages_text(messages: Sequence[RenderedMessage]) -> str:
    """The rendered request as the snapshot and ``llmjudge compile`` show it."""
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)
