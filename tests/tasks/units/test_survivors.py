"""Behaviours found by mutation testing of ``pytest_llmjudge/tasks/``: each test here tells the code
from a change that the rest of the suite let through (the sandbox's size accounting at its exact
limits, a template refused at load rather than at render, where a missing template is reported,
the encoding an output schema is read in, and cache keys that stay those of earlier versions)."""

from __future__ import annotations

import hashlib
import io
import json
import textwrap
from pathlib import Path

import pytest

from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.files import load_benchmark
from pytest_llmjudge.tasks.build import TaskOptions, build_task
from pytest_llmjudge.tasks.model_task import ModelTask
from pytest_llmjudge.tasks.output_cache import output_key
from pytest_llmjudge.tasks.prompt_template import load_prompt_template
from tests.tasks.units.test_sandbox import refused, rendered


def too_large(size: int) -> str:
    return f"a value of {size:,} characters (the limit is 4,000,000)"


# -- what one render builds ------------------------------------------------------------------------


def test_what_a_render_builds_may_reach_its_limit_exactly() -> None:
    half = "x" * 2_000_000
    four = "{% set a = h + h %}{% set b = h + h %}{% set c = h + h %}{% set d = h + h %}"  # 16,000,000
    assert rendered(four + "ok", h=half) == "ok"
    assert refused(four + "{% set e = 'a' + 'b' %}ok", h=half) == (
        "more than 16,000,000 characters built in one render"
    )


# -- the weight of a printed value -------------------------------------------------------------------


def test_a_printed_list_that_reaches_the_limit_with_items_left_counts_them_too() -> None:
    # the list 4, the long string 3,999,994 + 2: exactly 4,000,000 with 'x' still to count
    items = ["x", "y" * 3_999_994]
    assert refused("{{ items }}", items=items) == too_large(4_000_003)


def test_a_printed_list_counts_a_nested_list_on_top_of_the_items_before_it() -> None:
    long = "z" * 1_500_000
    # 4 + 2 for the list, 2 for the empty one, 1,500,002 for each string
    assert refused("{{ items }}", items=[long, [], long, long]) == too_large(4_500_014)


def test_a_printed_mapping_counts_its_entries_and_braces_on_top_of_the_items_before_it() -> None:
    # the list 4, the string 3,999,988, the mapping 1 + 2, its key and its value 3 each
    items = [{"k": "v"}, "y" * 3_999_986]
    assert refused("{{ items }}", items=items) == too_large(4_000_001)


def test_a_printed_number_counts_as_twenty_four_characters() -> None:
    # the list 4, the string 3,999,973, the number 24
    assert refused("{{ items }}", items=[7, "y" * 3_999_971]) == too_large(4_000_001)
    assert len(rendered("{{ items }}", items=[7, "y" * 3_999_970])) == 3_999_977


# -- operators on large numbers ----------------------------------------------------------------------


def test_a_large_number_times_zero_is_computed() -> None:
    assert rendered("{{ n * 0 }} {{ 0 * n }}", n=2**40_000) == "0 0"


def test_adding_to_a_large_number_and_its_remainder_are_computed() -> None:
    assert rendered("{{ (n + 1) > n }} {{ n % 7 }} {{ n - 1 > 0 }}", n=2**40_000) == "True 2 True"


# -- loading a prompt template -----------------------------------------------------------------------


def load(tmp_path: Path, text: str) -> SpecError:
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(SpecError) as caught:
        load_prompt_template(path, "t.yaml")
    return caught.value


def test_a_template_with_an_unknown_filter_is_refused_at_load_at_its_line(tmp_path: Path) -> None:
    text = "prompt:\n  template: |\n    Narrative:\n    {{ source_narrative|nosuch }}\n"
    assert str(load(tmp_path, text)) == (
        "t.yaml:2:3: prompt.template: invalid template: No filter named 'nosuch'. (template line 2)\n"
        "  hint: check the {{ }} and {% %} tags"
    )


def test_a_template_defining_a_block_twice_is_refused_at_load(tmp_path: Path) -> None:
    text = (
        'messages:\n  - role: user\n    content: "{% block a %}{% endblock %}{% block a %}{% endblock %}"\n'
    )
    assert str(load(tmp_path, text)) == (
        "t.yaml:3:5: messages[0].content: invalid template: block 'a' defined twice\n"
        "  hint: check the {{ }} and {% %} tags"
    )


MISSING = (
    "prompt.template: required field is missing\n"
    "  hint: write 'template: ...' (one user message) or 'messages: [...]' under 'prompt:'"
)


@pytest.mark.parametrize("text", ["prompt:\n", "metadata: {a: 1}\nprompt: null\n"])
def test_an_empty_prompt_key_is_a_missing_template_at_that_key(tmp_path: Path, text: str) -> None:
    line = text.count("\n")
    assert str(load(tmp_path, text)) == f"t.yaml:{line}:1: {MISSING}"


def test_a_template_key_without_a_value_is_the_error_at_that_key(tmp_path: Path) -> None:
    assert (
        str(load(tmp_path, "prompt:\n  template_variables: [a]\n  template:\n")) == f"t.yaml:3:3: {MISSING}"
    )


# -- an output schema ------------------------------------------------------------------------------


def test_an_output_schema_is_read_as_utf8_whatever_the_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/p.yaml").write_text('prompt:\n  template: "{{ source_narrative }}"\n')
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas/answer.json").write_bytes(
        '{"type": "object", "properties": {"café": {"type": "string"}}}'.encode()
    )
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks/M1.yaml").write_text(
        "code: M1\nconcept: The answer names the drug.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\nthreshold: 0.5\n"
        "task:\n  model: openai:m\n  prompt_file: prompts/p.yaml\n  output_schema: schemas/answer.json\n"
        "cases:\n  - {id: c1, source_narrative: x}\n"
    )
    bench = load_benchmark(tmp_path / "benchmarks/M1.yaml", "benchmarks/M1.yaml", tmp_path)
    # a machine whose locale encoding is Latin-1 (as Windows' cp1252 is): text read without an
    # encoding would be decoded in it
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "latin-1")
    built = build_task(bench, tmp_path, TaskOptions(), lambda model, base_url: model)
    assert built is not None and isinstance(built.task, ModelTask)
    assert built.task.output_schema is not None
    assert json.loads(built.task.output_schema) == {
        "type": "object",
        "properties": {"café": {"type": "string"}},
    }


# -- cache keys as earlier versions made them: stored outputs stay hits after an upgrade -------------


def test_an_outputs_cache_key_is_the_digest_of_its_task_and_what_it_was_given() -> None:
    expected = hashlib.sha256(b'{"given":{"a":[1,"\\u00e9"]},"task":"fp"}').hexdigest()
    assert output_key("fp", {"a": [1, "é"]}) == expected


def test_a_prompt_templates_digest_is_that_of_its_messages_variables_and_client_parameters(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        'prompt:\n  template: "{{ x }}"\n  template_variables: [x]\n  client_parameters: {temperature: 0}\n'
    )
    expected = b'{"client_parameters":[["temperature",0]],"declared":["x"],"messages":[["user","{{ x }}"]]}'
    assert load_prompt_template(path, "t.yaml").digest == hashlib.sha256(expected).hexdigest()
