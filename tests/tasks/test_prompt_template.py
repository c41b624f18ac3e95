"""Prompt-template files: both formats load with their lines, mistakes point at theirs, and
rendering is strict (a missing field is named with the fields the case has)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_llmjudge.suite.errors import Location, SpecError
from pytest_llmjudge.suite.files import Case, CaseSpec
from pytest_llmjudge.tasks.few_shot import Example
from pytest_llmjudge.tasks.prompt_template import (
    PromptTemplate,
    RenderedMessage,
    TemplateFieldError,
    TemplateMessage,
    TemplateRenderError,
    case_fields,
    load_prompt_template,
    render_messages,
)

SEED = """\
prompt:
  template: "Query: {{user_request}}\\nContext: {{context_document}}"
  template_variables:
    - user_request
    - context_document
metadata:
  version: 1.0.0
client_parameters: {temperature: 0, max_tokens: 20}
custom_data: {}
"""

CHAT = """\
messages:
  - role: system
    content: You extract the chief complaint.
  - role: user
    content: |
      Narrative: {{ source_narrative }}
      Agency: {{ agency }}
template_variables: [source_narrative, agency]
client_parameters:
  temperature: 0
"""


def load(tmp_path: Path, text: str, name: str = "t.yaml") -> PromptTemplate:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_prompt_template(path, name)


def error(tmp_path: Path, text: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        load(tmp_path, text)
    return caught.value


def case(**fields: object) -> Case:
    return Case(CaseSpec.model_validate({"id": "c1", **fields}), Location("cases.yaml", 3, 3))


# -- loading -----------------------------------------------------------------------------------------


def test_the_seed_format_is_one_user_message(tmp_path: Path) -> None:
    template = load(tmp_path, SEED)
    assert template.display == "t.yaml"
    assert template.messages == (
        TemplateMessage("user", "Query: {{user_request}}\nContext: {{context_document}}", 2),
    )
    assert template.declared == ("user_request", "context_document")
    assert template.client_parameters == (("max_tokens", 20), ("temperature", 0))
    assert template.used == ("context_document", "user_request")


def test_the_messages_format_keeps_roles_and_lines(tmp_path: Path) -> None:
    template = load(tmp_path, CHAT)
    assert [(m.role, m.line) for m in template.messages] == [("system", 3), ("user", 5)]
    assert template.messages[1].template == "Narrative: {{ source_narrative }}\nAgency: {{ agency }}\n"
    assert template.declared == ("source_narrative", "agency")
    assert template.used == ("agency", "source_narrative")
    assert template.client_parameters == (("temperature", 0),)


def test_template_variables_may_be_left_out(tmp_path: Path) -> None:
    template = load(tmp_path, "messages:\n  - {role: user, content: '{{ id }}'}\n")
    assert template.declared is None
    assert template.used == ("id",)


def test_the_digest_follows_content_not_layout(tmp_path: Path) -> None:
    first = load(tmp_path, CHAT, "a.yaml")
    relaid = load(tmp_path, "# a comment\n\n" + CHAT, "b.yaml")
    assert relaid.digest == first.digest
    assert relaid.messages[0].line == first.messages[0].line + 2
    edited = load(tmp_path, CHAT.replace("chief complaint", "complaint"), "c.yaml")
    retuned = load(tmp_path, CHAT.replace("temperature: 0", "temperature: 1"), "d.yaml")
    assert len({first.digest, edited.digest, retuned.digest}) == 3
    assert len(first.digest) == 64


@pytest.mark.parametrize(
    ("text", "line", "field", "message", "hint"),
    [
        (SEED + "custom_dta: {}\n", 10, "custom_dta", "unknown key 'custom_dta'",
         "did you mean 'custom_data'?"),
        (CHAT + "metdata: {}\n", 11, "metdata", "unknown key 'metdata'", "did you mean 'metadata'?"),
        ("promt:\n  template: x\n", 1, "promt", "unknown key 'promt'", "did you mean 'prompt'?"),
        ("prompt:\n  template_variables: [a]\n", 1, "prompt.template", "required field is missing",
         "template"),
        ("messages:\n  - role: system\n    content: hi\n  - role: usr\n    content: x\n", 4,
         "messages[1].role", "'usr' is not one of", "did you mean 'user'?"),
        ("messages:\n  - {role: user}\n", 2, "messages[0].content", "required field is missing", "content"),
        ("messages:\n  - role: user\n    content: |\n      {{ x }\n", 3, "messages[0].content",
         "invalid template", "{{ }}"),
        ("prompt:\n  template: '{% if a %}'\n", 2, "prompt.template", "invalid template", "{% %}"),
        ("messages:\n  - {role: system, content: hi}\n", 1, "messages", "no message has role 'user'", "user"),
        ("messages: []\n", 1, "messages", "at least 1", ""),
        ("prompt: {template: a}\nmessages:\n  - {role: user, content: b}\n", 2, "messages", "not both", ""),
        ("title: notes\n", 1, "", "neither 'prompt:' nor 'messages:'", "messages:"),
        ("- a\n- b\n", 1, "", "got a list", "prompt:"),
        ("", 1, "", "got an empty file", "prompt:"),
    ],
    ids=[
        "seed-unknown-key", "messages-unknown-key", "top-level-typo", "missing-template", "wrong-role",
        "missing-content", "syntax-error-in-message", "syntax-error-in-seed", "no-user-message",
        "empty-messages", "both-formats", "no-template", "not-a-mapping", "empty-file",
    ],
)  # fmt: skip
def test_mistakes_point_at_their_line_with_a_hint(
    tmp_path: Path, text: str, line: int, field: str, message: str, hint: str
) -> None:
    found = error(tmp_path, text)
    assert found.location.path == "t.yaml"
    assert found.location.line == line
    assert found.field == field
    assert message in found.message
    assert hint in found.hint
    assert str(found).startswith(f"t.yaml:{line}:")


def test_a_syntax_error_names_the_template_line(tmp_path: Path) -> None:
    found = error(tmp_path, "messages:\n  - role: user\n    content: |\n      a\n      {{ x }\n")
    assert found.location.line == 3
    assert "(template line 2)" in found.message


# -- case fields ---------------------------------------------------------------------------------------


def test_case_fields_withhold_ground_truth_unless_asked() -> None:
    full = case(
        source_narrative="pt c/o chest pain",
        inputs={"agency": "EMS 4", "id": "shadowed"},
        ground_truth="chest pain",
        metadata={"shift": "night"},
        label="pass",
    )
    fields = case_fields("CC1", full, sees_ground_truth=False)
    assert fields == {
        "id": "c1",
        "benchmark": "CC1",
        "source_narrative": "pt c/o chest pain",
        "inputs": {"agency": "EMS 4", "id": "shadowed"},
        "agency": "EMS 4",
        "metadata": {"shift": "night"},
    }
    assert case_fields("CC1", full, sees_ground_truth=True)["ground_truth"] == "chest pain"


def test_case_fields_of_a_bare_case() -> None:
    assert case_fields("CC1", case(), sees_ground_truth=True) == {
        "id": "c1",
        "benchmark": "CC1",
        "inputs": {},
    }


def test_an_input_named_ground_truth_never_stands_in_for_it() -> None:
    fields = case_fields("CC1", case(inputs={"ground_truth": "typed by a user"}), sees_ground_truth=False)
    assert "ground_truth" not in fields
    assert fields["inputs"] == {"ground_truth": "typed by a user"}


# -- rendering -----------------------------------------------------------------------------------------


def test_render_fills_every_message(tmp_path: Path) -> None:
    template = load(tmp_path, CHAT)
    fields = case_fields("CC1", case(source_narrative="chest pain", inputs={"agency": "EMS 4"}), False)
    assert render_messages(template, fields) == (
        RenderedMessage("system", "You extract the chief complaint."),
        RenderedMessage("user", "Narrative: chest pain\nAgency: EMS 4\n"),
    )


def test_a_missing_field_is_named_with_the_fields_the_case_has(tmp_path: Path) -> None:
    template = load(tmp_path, CHAT)
    fields = case_fields("CC1", case(source_narrative="chest pain"), False)
    with pytest.raises(TemplateFieldError) as caught:
        render_messages(template, fields)
    assert caught.value.variable == "agency"
    assert caught.value.available == ("benchmark", "id", "inputs", "source_narrative")
    assert str(caught.value) == (
        "template variable 'agency' is not a field of the case "
        "(it has: benchmark, id, inputs, source_narrative)"
    )


def test_ground_truth_is_not_a_field_unless_the_task_sees_it(tmp_path: Path) -> None:
    template = load(tmp_path, "messages:\n  - {role: user, content: 'Answer: {{ ground_truth }}'}\n")
    labelled = case(ground_truth="chest pain")
    with pytest.raises(TemplateFieldError, match="'ground_truth' is not a field"):
        render_messages(template, case_fields("CC1", labelled, sees_ground_truth=False))
    rendered = render_messages(template, case_fields("CC1", labelled, sees_ground_truth=True))
    assert rendered == (RenderedMessage("user", "Answer: chest pain"),)


def test_a_missing_key_below_a_field_is_a_render_error_naming_the_message(tmp_path: Path) -> None:
    template = load(tmp_path, "messages:\n  - role: user\n    content: '{{ inputs.agency }}'\n")
    with pytest.raises(TemplateRenderError, match=r"user message \(line 3\): .*'agency'"):
        render_messages(template, case_fields("CC1", case(), False))


EXAMPLES = (
    Example("e1", {"id": "e1", "source_narrative": "fell off a ladder"}, "fall", "fall"),
    Example("e2", {"id": "e2", "source_narrative": "short of breath"}, {"complaint": "dyspnea"}, ""),
)


def test_examples_become_user_and_assistant_turns_before_the_last_user_message(tmp_path: Path) -> None:
    template = load(
        tmp_path,
        """\
        messages:
          - {role: system, content: Extract the complaint.}
          - {role: user, content: "Narrative: {{ source_narrative }}"}
          - {role: assistant, content: Ready.}
          - {role: user, content: "Narrative: {{ source_narrative }} ({{ id }})"}
        """,
    )
    rendered = render_messages(template, {"id": "c1", "source_narrative": "chest pain"}, EXAMPLES)
    assert rendered == (
        RenderedMessage("system", "Extract the complaint."),
        RenderedMessage("user", "Narrative: chest pain"),
        RenderedMessage("assistant", "Ready."),
        RenderedMessage("user", "Narrative: fell off a ladder (e1)"),
        RenderedMessage("assistant", "fall"),
        RenderedMessage("user", "Narrative: short of breath (e2)"),
        RenderedMessage("assistant", '{"complaint":"dyspnea"}'),
        RenderedMessage("user", "Narrative: chest pain (c1)"),
    )


def test_an_example_lacking_a_field_is_named(tmp_path: Path) -> None:
    template = load(tmp_path, CHAT)
    fields = {"id": "c1", "source_narrative": "chest pain", "agency": "EMS 4"}
    with pytest.raises(TemplateFieldError) as caught:
        render_messages(template, fields, EXAMPLES[:1])
    assert str(caught.value) == (
        "template variable 'agency' is not a field of few-shot example 'e1' (it has: id, source_narrative)"
    )


def test_a_template_that_names_examples_gets_them_as_a_list(tmp_path: Path) -> None:
    template = load(
        tmp_path,
        """\
        prompt:
          template: |
            {% for ex in examples %}{{ ex.id }}: {{ ex.source_narrative }} -> {{ ex.output }}
            {% endfor %}Now: {{ source_narrative }}
        """,
    )
    rendered = render_messages(template, {"id": "c1", "source_narrative": "chest pain"}, EXAMPLES)
    assert rendered == (
        RenderedMessage(
            "user",
            "e1: fell off a ladder -> fall\n"
            "e2: short of breath -> {'complaint': 'dyspnea'}\n"
            "Now: chest pain\n",
        ),
    )
    no_examples = render_messages(template, {"id": "c1", "source_narrative": "chest pain"})
    assert no_examples == (RenderedMessage("user", "Now: chest pain\n"),)
