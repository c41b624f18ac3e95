"""What a prompt template tells the user: an example's answer as the assistant's turn (compact,
sorted JSON, non-ASCII kept), a missing field named with the fields there are, and a file with
no template pointed at the key that was likely meant."""

from __future__ import annotations

import datetime
import textwrap
from pathlib import Path

import pytest

from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.tasks.few_shot import Example
from pytest_llmjudge.tasks.prompt_template import (
    PromptTemplate,
    TemplateFieldError,
    TemplateRenderError,
    load_prompt_template,
    output_text,
    render_messages,
)

CHAT = """\
messages:
  - role: system
    content: You extract the complaint.
  - role: user
    content: "Narrative: {{ source_narrative }}"
"""


def load(tmp_path: Path, text: str) -> PromptTemplate:
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text))
    return load_prompt_template(path, "t.yaml")


def error(tmp_path: Path, text: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        load(tmp_path, text)
    return caught.value


# -- an example's answer ---------------------------------------------------------------------------


def test_an_examples_text_answer_is_its_turn_as_it_is() -> None:
    assert output_text("chest pain") == "chest pain"


def test_an_examples_structured_answer_is_compact_json_with_sorted_keys_and_its_own_letters() -> None:
    answer = {"complaint": "douleur thoracique é", "at": datetime.date(2024, 1, 2), "codes": [1, 2]}
    assert output_text(answer) == '{"at":"2024-01-02","codes":[1,2],"complaint":"douleur thoracique é"}'


def test_the_assistant_turn_of_an_example_is_its_answer_as_json(tmp_path: Path) -> None:
    example = Example("e1", {"source_narrative": "fell"}, {"z": "chute", "a": "ä"})
    messages = render_messages(load(tmp_path, CHAT), {"source_narrative": "now"}, [example])
    assert [(m.role, m.content) for m in messages] == [
        ("system", "You extract the complaint."),
        ("user", "Narrative: fell"),
        ("assistant", '{"a":"ä","z":"chute"}'),
        ("user", "Narrative: now"),
    ]


# -- a field that is not there -----------------------------------------------------------------------


def test_a_missing_field_of_an_example_names_the_example(tmp_path: Path) -> None:
    example = Example("e7", {"id": "e7"}, "x")
    with pytest.raises(TemplateFieldError) as caught:
        render_messages(load(tmp_path, CHAT), {"source_narrative": "now"}, [example])
    assert caught.value.example == "e7" and caught.value.variable == "source_narrative"
    assert caught.value.available == ("id",)


def test_a_missing_field_of_the_case_names_no_example(tmp_path: Path) -> None:
    with pytest.raises(TemplateFieldError) as caught:
        render_messages(load(tmp_path, CHAT), {"id": "c1", "inputs": {}})
    assert caught.value.example is None
    assert str(caught.value) == (
        "template variable 'source_narrative' is not a field of the case (it has: id, inputs)"
    )


def test_a_case_with_no_fields_says_so() -> None:
    assert (
        str(TemplateFieldError("x", ()))
        == "template variable 'x' is not a field of the case (it has: no fields)"
    )


# -- a file without a template -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "field", "message", "hint"),
    [
        ("metadata: {}\nmesages:\n  - {role: user, content: x}\n", 2, "mesages", "unknown key 'mesages'",
         "did you mean 'messages'?"),
        ("metadata: {}\nprompts:\n  template: x\n", 2, "prompts", "unknown key 'prompts'",
         "did you mean 'prompt'?"),
        ("metadata: {}\ntitle: x\n", 1, "<file>", "no template: neither 'prompt:' nor 'messages:'",
         "write 'prompt: {template: ...}' or 'prompt: {messages: [{role: user, content: ...}]}'"),
    ],
)  # fmt: skip
def test_a_file_without_a_template_points_at_the_likely_typo(
    tmp_path: Path, text: str, line: int, field: str, message: str, hint: str
) -> None:
    assert str(error(tmp_path, text)) == f"t.yaml:{line}:1: {field}: {message}\n  hint: {hint}"


# -- syntax errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "where"),
    [("'{{ x }'", ""), ("'a\n\n  {{ x }'", " (template line 2)")],
)
def test_a_syntax_error_names_the_template_line_only_past_the_first(
    tmp_path: Path, template: str, where: str
) -> None:
    found = error(tmp_path, f"prompt:\n  template: {template}\n")
    assert found.message == f"invalid template: unexpected '}}'{where}"


def test_a_private_attribute_on_the_first_line_names_no_template_line(tmp_path: Path) -> None:
    found = error(tmp_path, "prompt:\n  template: '{{ x.__class__ }}'\n")
    assert found.message == (
        "the template reads the private attribute '__class__', which a sandboxed template may not"
    )


def test_a_private_attribute_on_a_later_line_names_it(tmp_path: Path) -> None:
    found = error(tmp_path, "prompt:\n  template: |\n    a\n    {{ x.__class__ }}\n")
    assert "'__class__' (template line 2), which" in found.message


# -- errors while rendering ------------------------------------------------------------------------


def render_error(tmp_path: Path, content: str, fields: dict[str, object], *examples: Example) -> str:
    template = load(
        tmp_path, f"messages:\n  - role: system\n    content: hi\n  - role: user\n    content: '{content}'\n"
    )
    with pytest.raises(TemplateRenderError) as caught:
        render_messages(template, fields, examples)
    return str(caught.value)


def test_an_operation_the_value_does_not_support_names_the_message_and_the_error(tmp_path: Path) -> None:
    message = render_error(tmp_path, "{{ n + 1 }}", {"n": "seven"})
    assert message == 'user message (line 5): TypeError: can only concatenate str (not "int") to str'


def test_a_missing_key_of_a_few_shot_examples_field_names_the_example(tmp_path: Path) -> None:
    example = Example("e3", {"inputs": {}}, "x")
    message = render_error(tmp_path, "{{ inputs.agency }}", {"inputs": {"agency": "EMS"}}, example)
    assert (
        message == "user message (line 5) for few-shot example 'e3': 'dict object' has no attribute 'agency'"
    )


def test_a_macro_that_calls_itself_without_end_is_a_render_error(tmp_path: Path) -> None:
    message = render_error(tmp_path, "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", {})
    assert message == "user message (line 5): a macro or loop recursed too deeply"


def test_a_case_whose_own_inputs_hold_examples_keeps_them_without_few_shot(tmp_path: Path) -> None:
    template = load(tmp_path, "prompt:\n  template: '{% for e in examples %}{{ e }};{% endfor %}'\n")
    assert render_messages(template, {"examples": ["a", "b"]})[0].content == "a;b;"
    shot = Example("e1", {"id": "e1"}, "out")
    assert (
        render_messages(template, {"examples": ["a"]}, [shot])[0].content == "{'id': 'e1', 'output': 'out'};"
    )
    assert render_messages(template, {})[0].content == ""


def test_an_operation_a_few_shot_examples_value_does_not_support_names_the_example(tmp_path: Path) -> None:
    example = Example("e4", {"n": "seven"}, "x")
    message = render_error(tmp_path, "{{ n + 1 }}", {"n": 1}, example)
    assert message == (
        "user message (line 5) for few-shot example 'e4': "
        'TypeError: can only concatenate str (not "int") to str'
    )


def test_a_macro_without_end_for_a_few_shot_example_names_the_example(tmp_path: Path) -> None:
    example = Example("e5", {"deep": True}, "x")
    source = "{% macro f(k) %}{% if k %}{{ f(k) }}{% endif %}{% endmacro %}{{ f(deep) }}"
    message = render_error(tmp_path, source, {"deep": False}, example)
    assert message == "user message (line 5) for few-shot example 'e5': a macro or loop recursed too deeply"


def test_variables_given_three_times_are_an_error_at_the_second(tmp_path: Path) -> None:
    found = error(
        tmp_path,
        "template_variables: [a]\nprompt:\n  template: '{{ a }}'\n"
        "  template_variables: [a]\n  input_variables: [a]\n",
    )
    assert str(found) == (
        "t.yaml:4:3: prompt.template_variables: given as 'template_variables' as well\n"
        "  hint: keep one of 'template_variables' and 'prompt.template_variables'"
    )


def test_a_conversation_without_a_user_message_says_what_to_add(tmp_path: Path) -> None:
    found = error(tmp_path, "messages:\n  - {role: system, content: hi}\n")
    assert found.message == "no message has role 'user'"
    assert found.hint == "add '- {role: user, content: ...}' with the case's fields"


# -- where the linter points -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "template_key", "variables_key"),
    [
        ("messages:\n  - {role: user, content: x}\n", ("messages",), ("template_variables",)),
        (
            "prompt:\n  messages:\n    - {role: user, content: x}\n",
            ("prompt", "messages"),
            ("prompt", "template_variables"),
        ),
        ("prompt:\n  template: x\n", ("prompt", "template"), ("prompt", "template_variables")),
        (
            "prompt:\n  template: x\n  input_variables: []\n",
            ("prompt", "template"),
            ("prompt", "input_variables"),
        ),
        ("prompt:\n  template: x\ntemplate_variables: []\n", ("prompt", "template"), ("template_variables",)),
    ],
)
def test_the_template_knows_where_its_templates_and_variables_are(
    tmp_path: Path, text: str, template_key: tuple[str, ...], variables_key: tuple[str, ...]
) -> None:
    template = load(tmp_path, text)
    assert (template.template_key, template.variables_key) == (template_key, variables_key)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "metadata: {}\nprompt:\n  template_variables: [a]\n",
            "t.yaml:2:1: prompt.template: required field is missing\n"
            "  hint: write 'template: ...' (one user message) or 'messages: [...]' under 'prompt:'",
        ),
        (
            "prompt:\n  template: x\n  messages:\n    - {role: user, content: y}\n",
            "t.yaml:3:3: prompt.messages: 'prompt:' has either 'template:' or 'messages:', not both\n"
            "  hint: keep one of the two",
        ),
        (
            "prompt:\n  template: '{{ x }'\n",
            "t.yaml:2:3: prompt.template: invalid template: unexpected '}'\n"
            "  hint: check the {{ }} and {% %} tags",
        ),
        (
            "prompt:\n  template: '{{ x.__class__ }}'\n",
            "t.yaml:2:3: prompt.template: the template reads the private attribute '__class__', which a "
            "sandboxed template may not\n"
            "  hint: use only the case's fields and their values; templates cannot reach Python internals",
        ),
        (
            "prompt:\n  template: x\nmessages:\n  - {role: user, content: y}\n",
            "t.yaml:3:1: messages: a prompt-template file has either 'prompt:' or 'messages:', not both\n"
            "  hint: keep one of the two",
        ),
        (
            "metadata: {}\nprompt:\n  template: x\n  metadata: {}\n",
            "t.yaml:4:3: prompt.metadata: given as 'metadata' as well\n"
            "  hint: keep one of 'metadata' and 'prompt.metadata'",
        ),
        (
            "custom_data: {}\nprompt:\n  template: x\n  custom_data: {}\n",
            "t.yaml:4:3: prompt.custom_data: given as 'custom_data' as well\n"
            "  hint: keep one of 'custom_data' and 'prompt.custom_data'",
        ),
    ],
    ids=[
        "no-template-under-prompt",
        "template-and-messages",
        "syntax",
        "private-attribute",
        "prompt-and-messages",
        "metadata-twice",
        "custom-data-twice",
    ],
)
def test_a_template_that_cannot_load_says_where_why_and_what_to_do(
    tmp_path: Path, text: str, expected: str
) -> None:
    assert str(error(tmp_path, text)) == expected
