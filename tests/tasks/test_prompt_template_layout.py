"""The prompt_templates library's layout, everything under ``prompt:``, loads as the flat one does:
the FACTS grounding template as the library writes it renders as a model task's prompt."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import Suite

from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.tasks.prompt_template import PromptTemplate, TemplateMessage, load_prompt_template

FACTS = Path("/work/shared/seeds/facts_grounding_prompt_template.yaml")
if not FACTS.exists():  # a checkout beside the shared folder
    FACTS = Path(__file__).parents[3] / "shared/seeds/facts_grounding_prompt_template.yaml"

NESTED_CHAT = """\
prompt:
  messages:
    - role: system
      content: You extract medications.
    - role: user
      content: "Narrative: {{ source_narrative }}"
  input_variables: [source_narrative]
  metadata: {version: 1.0.0, tags: [extraction]}
  client_parameters: {temperature: 0.25}
  custom_data: {}
"""

FACTS_BENCHMARK = """\
code: F1
concept: The response is grounded in the context.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
task:
  model: openai:release-1
  base_url: {url}/v1
  prompt_file: prompts/facts.yaml
cases:
  - id: grounded
    inputs:
      user_request: What colour are bananas?
      context_document: Apples are red fruits. Bananas are yellow fruits.
      response: Bananas are yellow.
"""

CHAT_BENCHMARK = """\
code: C1
concept: The answer names the narrative.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
task:
  model: openai:release-2
  base_url: {url}/v1
  prompt_file: prompts/chat.yaml
cases:
  - {{id: asked, source_narrative: "Pt given heparin"}}
"""


def load(tmp_path: Path, text: str) -> PromptTemplate:
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_prompt_template(path, "t.yaml")


def test_the_facts_template_as_the_library_writes_it_loads(tmp_path: Path) -> None:
    copy = tmp_path / "facts.yaml"
    shutil.copyfile(FACTS, copy)
    template = load_prompt_template(copy, "facts.yaml")
    assert template.declared == ("user_request", "context_document", "response")
    assert template.used == ("context_document", "response", "user_request")
    (message,) = template.messages
    assert message.role == "user" and message.line == 4
    assert message.template.startswith("You are a helpful and harmless AI assistant.")


def test_messages_and_everything_else_may_sit_under_prompt(tmp_path: Path) -> None:
    template = load(tmp_path, NESTED_CHAT)
    assert template.messages == (
        TemplateMessage("system", "You extract medications.", 4),
        TemplateMessage("user", "Narrative: {{ source_narrative }}", 6),
    )
    assert template.declared == ("source_narrative",)  # from the older name, input_variables
    assert template.client_parameters == (("temperature", 0.25),)
    assert template.template_key == ("prompt", "messages")
    assert template.variables_key == ("prompt", "input_variables")


def test_the_flat_layout_still_loads_and_means_the_same(tmp_path: Path) -> None:
    flat = load(
        tmp_path,
        """\
        messages:
          - {role: system, content: You extract medications.}
          - {role: user, content: "Narrative: {{ source_narrative }}"}
        template_variables: [source_narrative]
        client_parameters: {temperature: 0.25}
        """,
    )
    nested = load(tmp_path, NESTED_CHAT)
    assert flat.digest == nested.digest


@pytest.mark.parametrize(
    ("text", "line", "field", "message", "hint"),
    [
        ("prompt:\n  template: x\n  metdata: {}\n", 3, "prompt.metdata", "unknown key 'metdata'",
         "did you mean 'metadata'?"),
        ("prompt:\n  template: x\n  messages:\n    - {role: user, content: y}\n", 3, "prompt.messages",
         "'prompt:' has either 'template:' or 'messages:', not both", "keep one"),
        ("prompt:\n  template: x\n  client_parameters: {}\nclient_parameters: {}\n", 3,
         "prompt.client_parameters", "given as 'client_parameters' as well", "keep one"),
        ("prompt:\n  template: x\n  template_variables: []\n  input_variables: []\n", 4,
         "prompt.input_variables", "given as 'prompt.template_variables' as well", "keep one"),
        ("prompt:\n  messages:\n    - {role: system, content: hi}\n", 2, "prompt.messages",
         "no message has role 'user'", "user"),
        ("prompt:\n  metadata: {}\n", 1, "prompt.template", "required field is missing", "messages"),
    ],
    ids=["unknown-key", "template-and-messages", "twice", "both-variable-names", "no-user", "no-template"],
)  # fmt: skip
def test_mistakes_in_the_nested_layout_point_at_their_line(
    tmp_path: Path, text: str, line: int, field: str, message: str, hint: str
) -> None:
    with pytest.raises(SpecError) as caught:
        load(tmp_path, text)
    found = caught.value
    assert (found.location.line, found.field) == (line, field)
    assert message in found.message and hint in found.hint


def test_a_run_renders_the_facts_and_nested_chat_templates(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The FACTS file, copied as the library wrote it, is a model task's prompt; so is a nested
    chat template; the linter reads both as collection does."""
    import pydantic_ai.models
    from conftest import JUDGE_CONFTEST
    from fake_openai import serve

    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    suite.pytester.makeconftest(JUDGE_CONFTEST.replace("pydantic_ai.models.ALLOW_MODEL_REQUESTS = False", ""))
    shutil.copyfile(FACTS, suite.root / "facts.yaml")
    suite.write("prompts/facts.yaml", (suite.root / "facts.yaml").read_text(encoding="utf-8"), dedent=False)
    suite.write("prompts/chat.yaml", NESTED_CHAT)
    with serve(verdict="Bananas are yellow.") as fake:
        suite.benchmark("F1", FACTS_BENCHMARK.format(url=fake.url))
        suite.benchmark("C1", CHAT_BENCHMARK.format(url=fake.url))
        result = suite.run("benchmarks", "-k", "grounded or asked")
        result.assert_outcomes(passed=2)
        bodies = {c.body["model"]: c.body for c in fake.completions}
    (facts,) = [m["content"] for m in bodies["release-1"]["messages"]]
    assert facts.startswith("You are a helpful and harmless AI assistant.")
    assert "**User Query:**\nWhat colour are bananas?\n" in facts
    assert "**Context:**\nApples are red fruits. Bananas are yellow fruits.\n" in facts
    assert facts.endswith("**Response:**\nBananas are yellow.")
    chat = [(m["role"], m["content"]) for m in bodies["release-2"]["messages"]]
    assert chat == [("system", "You extract medications."), ("user", "Narrative: Pt given heparin")]
    assert bodies["release-2"]["temperature"] == 0.25  # the nested client_parameters
    command = [sys.executable, "-m", "pytest_llmjudge.cli.main", "lint", "benchmarks", "prompts"]
    linted = subprocess.run(command, cwd=suite.root, capture_output=True, text=True, check=False)
    assert "LJ000" not in linted.stdout, linted.stdout


def test_the_shipped_schema_accepts_the_nested_layout_and_refuses_what_the_loader_refuses() -> None:
    import json

    import jsonschema
    import yaml

    from pytest_llmjudge.cli.schema import shipped_path

    schema = json.loads(shipped_path("prompt-template").read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    for text in (FACTS.read_text(encoding="utf-8"), NESTED_CHAT):
        assert list(validator.iter_errors(yaml.safe_load(text))) == []
    both = "prompt:\n  template: x\n  messages: [{role: user, content: y}]\n"
    assert list(validator.iter_errors(yaml.safe_load(both)))
