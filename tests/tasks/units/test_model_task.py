"""A model as a task: the request rendered from the case and the few-shot examples, sent
through pydantic-ai (an offline FunctionModel here), and a fingerprint that changes with
whatever changes the answer (model, settings, template, few-shot rule, schema, version)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Case, CaseSpec
from pytest_llmjudge.tasks.few_shot import FewShotConfig, FewShotError, example_pool
from pytest_llmjudge.tasks.model_task import (
    ModelTask,
    TaskRequest,
    ask_model,
    messages_text,
    settings_json,
)
from pytest_llmjudge.tasks.prompt_template import (
    PromptTemplate,
    RenderedMessage,
    TemplateFieldError,
    load_prompt_template,
)

CHAT = """\
messages:
  - role: system
    content: You extract medications.
  - role: user
    content: "Narrative: {{ source_narrative }}"
client_parameters: {temperature: 0, max_tokens: 50}
"""


def make_case(case_id: str, **spec: Any) -> Case:
    return Case(CaseSpec.model_validate({"id": case_id, **spec}), Location("b.yaml", 1, 1))


SHOWN = make_case("shown", source_narrative="Pt given aspirin", ground_truth={"answer": "aspirin"})
ASKED = make_case("asked", source_narrative="Pt given heparin", ground_truth={"answer": "heparin"})


def template(tmp_path: Path, text: str = CHAT, name: str = "extract.yaml") -> PromptTemplate:
    path = tmp_path / name
    path.write_text(text)
    return load_prompt_template(path, f"prompts/{name}")


def model_task(tmp_path: Path, **changes: Any) -> ModelTask:
    loaded = template(tmp_path)
    task = ModelTask(
        label="openai:release-1",
        settings=settings_json(dict(loaded.client_parameters), {"temperature": 0.2}),
        template=loaded,
        output_schema=None,
        few_shot=None,
        pool=example_pool("M1", (SHOWN, ASKED)),
        sees_ground_truth=False,
    )
    return dataclasses.replace(task, **changes)


# -- settings --------------------------------------------------------------------------------------


def test_the_task_settings_override_the_prompt_files_client_parameters() -> None:
    merged = settings_json({"temperature": 0, "max_tokens": 50}, {"temperature": 1, "seed": 3})
    assert json.loads(merged) == {"temperature": 1, "max_tokens": 50, "seed": 3}
    assert json.loads(settings_json({"temperature": 0}, None)) == {"temperature": 0}


def test_the_settings_are_canonical_so_their_order_does_not_matter() -> None:
    assert settings_json({"b": 1, "a": 2}, None) == settings_json({"a": 2}, {"b": 1})


def test_the_model_settings_sent_are_the_merged_settings(tmp_path: Path) -> None:
    assert model_task(tmp_path).model_settings() == {"temperature": 0.2, "max_tokens": 50}


# -- fingerprint -----------------------------------------------------------------------------------


CHANGES: list[tuple[str, Any]] = [
    ("label", "openai:candidate-2"),
    ("settings", settings_json({"temperature": 0, "max_tokens": 50}, {"temperature": 1})),
    ("output_schema", '{"type":"object"}'),
    ("few_shot", FewShotConfig(n_shots=1)),
    ("version", "2"),
]


@pytest.mark.parametrize(("name", "value"), CHANGES, ids=[name for name, _ in CHANGES])
def test_the_fingerprint_changes_with_each_setting_of_the_task(tmp_path: Path, name: str, value: Any) -> None:
    assert model_task(tmp_path).fingerprint != model_task(tmp_path, **{name: value}).fingerprint


def test_the_fingerprint_changes_with_the_few_shot_rule(tmp_path: Path) -> None:
    one = model_task(tmp_path, few_shot=FewShotConfig(n_shots=1, seed=1)).fingerprint
    assert one != model_task(tmp_path, few_shot=FewShotConfig(n_shots=1, seed=2)).fingerprint


def test_the_fingerprint_changes_with_the_template(tmp_path: Path) -> None:
    other = template(tmp_path, CHAT.replace("You extract", "You list"), "other.yaml")
    assert model_task(tmp_path).fingerprint != model_task(tmp_path, template=other).fingerprint


def test_the_fingerprint_does_not_change_with_where_the_template_is_or_the_pool(tmp_path: Path) -> None:
    same = template(tmp_path, CHAT, "moved.yaml")
    fingerprint = model_task(tmp_path).fingerprint
    assert model_task(tmp_path, template=same, pool=()).fingerprint == fingerprint


def test_a_model_task_and_a_python_task_never_share_a_fingerprint(tmp_path: Path) -> None:
    from pytest_llmjudge.suite.hashing import digest

    task = model_task(tmp_path)
    fields = {
        "model": task.label,
        "settings": task.settings,
        "template": task.template.digest,
        "few_shot": None,
        "output_schema": None,
        "version": None,
    }
    assert task.fingerprint == digest({"kind": "model", **fields})


# -- the request -----------------------------------------------------------------------------------


def test_the_request_is_the_template_rendered_with_the_case(tmp_path: Path) -> None:
    request = model_task(tmp_path).request("M1", ASKED)
    assert request == TaskRequest(
        (
            RenderedMessage("system", "You extract medications."),
            RenderedMessage("user", "Narrative: Pt given heparin"),
        ),
        (),
    )
    assert request.as_dict() == {
        "messages": [["system", "You extract medications."], ["user", "Narrative: Pt given heparin"]],
        "examples": [],
    }


def test_few_shot_examples_come_before_the_case_with_their_ground_truth(tmp_path: Path) -> None:
    request = model_task(tmp_path, few_shot=FewShotConfig(n_shots=1, seed=7)).request("M1", ASKED)
    assert request.examples == ("shown",)
    assert [(m.role, m.content) for m in request.messages] == [
        ("system", "You extract medications."),
        ("user", "Narrative: Pt given aspirin"),
        ("assistant", '{"answer":"aspirin"}'),
        ("user", "Narrative: Pt given heparin"),
    ]
    assert request.as_dict()["examples"] == ["shown"]


def test_a_few_shot_rule_of_no_shots_shows_no_examples(tmp_path: Path) -> None:
    request = model_task(tmp_path, few_shot=FewShotConfig(n_shots=0), pool=()).request("M1", ASKED)
    assert request.examples == () and len(request.messages) == 2


def test_more_shots_than_the_pool_has_is_a_few_shot_error(tmp_path: Path) -> None:
    with pytest.raises(
        FewShotError, match="few_shot asks for 2 examples but the pool has 1 besides case 'asked'"
    ):
        model_task(tmp_path, few_shot=FewShotConfig(n_shots=2)).request("M1", ASKED)


def test_the_ground_truth_reaches_the_template_only_when_the_task_sees_it(tmp_path: Path) -> None:
    truth = template(tmp_path, CHAT.replace("{{ source_narrative }}", "{{ ground_truth.answer }}"), "t.yaml")
    request = model_task(tmp_path, template=truth, sees_ground_truth=True).request("M1", ASKED)
    assert request.messages[-1].content == "Narrative: heparin"
    with pytest.raises(
        TemplateFieldError, match="template variable 'ground_truth' is not a field of the case"
    ):
        model_task(tmp_path, template=truth).request("M1", ASKED)


def test_the_benchmark_code_is_a_field_of_the_request(tmp_path: Path) -> None:
    coded = template(tmp_path, CHAT.replace("{{ source_narrative }}", "{{ benchmark }}/{{ id }}"), "c.yaml")
    assert (
        model_task(tmp_path, template=coded).request("M7", ASKED).messages[-1].content
        == "Narrative: M7/asked"
    )


def test_the_messages_as_text_name_each_role() -> None:
    messages = (RenderedMessage("system", "Be brief."), RenderedMessage("user", "Hi\nthere"))
    assert messages_text(messages) == "[system]\nBe brief.\n\n[user]\nHi\nthere"
    assert messages_text(()) == ""


# -- asking the model ------------------------------------------------------------------------------


class Recorder:
    """A FunctionModel's function that keeps what it was sent and answers ``answer``."""

    def __init__(self, answer: str = "heparin", structured: dict[str, Any] | None = None) -> None:
        self.answer = answer
        self.structured = structured
        self.messages: list[ModelMessage] = []
        self.info: AgentInfo | None = None

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.messages = messages
        self.info = info
        if self.structured is not None:
            (tool,) = info.output_tools
            return ModelResponse(parts=[ToolCallPart(tool.name, self.structured)])
        return ModelResponse(parts=[TextPart(self.answer)])

    def turns(self) -> list[tuple[str, str]]:
        """What the model was sent, as (kind, text): its history, then the prompt."""
        turns: list[tuple[str, str]] = []
        for message in self.messages:
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    turns.append(("user", str(part.content)))
                elif isinstance(part, TextPart):
                    turns.append(("assistant", part.content))
        return turns


def ask(recorder: Recorder, *messages: tuple[str, str], **kwargs: Any) -> tuple[Any, list[Any], list[Any]]:
    request = TaskRequest(tuple(RenderedMessage(role, content) for role, content in messages), ())
    settings = kwargs.pop("settings", {})
    return asyncio.run(ask_model(FunctionModel(recorder), request, settings, kwargs.pop("schema", None)))


def test_system_messages_are_the_instructions_and_the_last_user_message_the_prompt() -> None:
    recorder = Recorder()
    output, responses, messages = ask(
        recorder,
        ("system", "You extract medications."),
        ("system", "Answer in one word."),
        ("user", "Narrative: Pt given aspirin"),
        ("assistant", "aspirin"),
        ("user", "Narrative: Pt given heparin"),
    )
    assert output == "heparin"
    assert recorder.info is not None
    assert recorder.info.instructions == "You extract medications.\n\nAnswer in one word."
    assert recorder.turns() == [
        ("user", "Narrative: Pt given aspirin"),
        ("assistant", "aspirin"),
        ("user", "Narrative: Pt given heparin"),
    ]
    assert isinstance(recorder.messages[1], ModelResponse)  # the example's answer is the model's turn
    assert [type(m) for m in responses] == [ModelResponse] and responses[0].parts[0].content == "heparin"
    assert responses[0] in messages and any(isinstance(m, ModelRequest) for m in messages)


def test_a_request_without_a_system_message_has_no_instructions() -> None:
    recorder = Recorder()
    ask(recorder, ("user", "Just this"))
    assert recorder.info is not None and recorder.info.instructions is None
    assert recorder.turns() == [("user", "Just this")]


def test_a_request_that_ends_with_the_assistant_sends_everything_as_history() -> None:
    recorder = Recorder()
    ask(recorder, ("user", "Start"), ("assistant", "Partial answer"))
    assert recorder.turns()[:2] == [("user", "Start"), ("assistant", "Partial answer")]


def test_the_settings_are_sent_to_the_model() -> None:
    recorder = Recorder()
    ask(recorder, ("user", "Hi"), settings={"temperature": 0.7, "max_tokens": 9})
    assert recorder.info is not None and recorder.info.model_settings is not None
    assert recorder.info.model_settings.get("temperature") == 0.7
    assert recorder.info.model_settings.get("max_tokens") == 9


def test_with_an_output_schema_the_answer_is_structured() -> None:
    schema = json.dumps(
        {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    )
    recorder = Recorder(structured={"answer": "heparin"})
    output, responses, _ = ask(recorder, ("user", "Narrative: Pt given heparin"), schema=schema)
    assert output == {"answer": "heparin"}
    assert recorder.info is not None and not recorder.info.allow_text_output
    (tool,) = recorder.info.output_tools
    assert tool.parameters_json_schema["properties"] == {"answer": {"type": "string"}}
    assert tool.parameters_json_schema["title"] == "answer"  # the model is told it writes the answer
    assert len(responses) == 1


def test_a_text_answer_where_structured_output_is_asked_is_not_retried() -> None:
    from pydantic_ai.exceptions import UnexpectedModelBehavior

    schema = json.dumps(
        {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    )
    calls: list[int] = []

    def wrong(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        return ModelResponse(parts=[TextPart("heparin, I think")])

    request = TaskRequest((RenderedMessage("user", "x"),), ())
    with pytest.raises(UnexpectedModelBehavior):
        asyncio.run(ask_model(FunctionModel(wrong), request, {}, schema))
    assert calls == [1]
