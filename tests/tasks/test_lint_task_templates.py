"""The linter checks the prompt templates that model tasks render (LJ040/LJ041), wherever they
live, and reads them as a task reads them: a file collection would refuse is an LJ000."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_llmjudge.lint import Linter, LintSettings

BENCHMARK = """\
code: CC1
concept: chief complaint
task:
  model: test
  prompt_file: {prompt_file}
cases:
  - id: c1
    source_narrative: pt c/o chest pain
"""

# Not a template to the linter on its own (no 'template' key): only its benchmark says it is one.
TYPO = """\
prompt:
  tmplate: "Narrative: {{ source_narrative }}"
"""

UNDECLARED = """\
prompt:
  template: "Narrative: {{ source_narrative }}"
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def linter(root: Path) -> Linter:
    return Linter(LintSettings(root=root), select=["LJ000", "LJ040", "LJ041"], base=root)


def findings(root: Path, *paths: str) -> set[tuple[str, str, int]]:
    lint = linter(root)
    return {(d.path, d.code, d.line) for d in lint.lint([root / p for p in paths])}


def test_a_task_template_outside_the_linted_folder_is_linted_with_its_benchmark(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "benchmarks/cc.yaml": BENCHMARK.format(prompt_file="prompts/.drafts/extract.yaml"),
            "prompts/.drafts/extract.yaml": TYPO,  # a dot folder: a walk would never enter it
        },
    )
    lint = linter(tmp_path)
    assert lint.discover([tmp_path / "benchmarks"])[1:] == [tmp_path / "prompts/.drafts/extract.yaml"]
    assert findings(tmp_path, "benchmarks") == {("prompts/.drafts/extract.yaml", "LJ000", 2)}


def test_a_task_template_is_read_as_a_task_reads_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "benchmarks/cc.yaml": BENCHMARK.format(prompt_file="prompts/extract.yaml"),
            "prompts/extract.yaml": TYPO,
            "prompts/unused.yaml": TYPO,
        },
    )
    (diagnostic,) = linter(tmp_path).lint_file(tmp_path / "prompts/extract.yaml")
    assert diagnostic.render().startswith("prompts/extract.yaml:2:3: LJ000 prompt.tmplate: unknown key")
    assert linter(tmp_path).lint_file(tmp_path / "prompts/unused.yaml") == []  # no task names it


def test_a_task_template_may_leave_its_variables_undeclared(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "benchmarks/cc.yaml": BENCHMARK.format(prompt_file="prompts/extract.yaml"),
            "prompts/extract.yaml": UNDECLARED,
            "judges/grounding.yaml": UNDECLARED,  # a judge-side template: today's rule applies
        },
    )
    assert findings(tmp_path, "benchmarks", "judges") == {("judges/grounding.yaml", "LJ040", 2)}


def test_a_task_template_with_declared_variables_is_checked_as_today(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "benchmarks/cc.yaml": BENCHMARK.format(prompt_file="prompts/extract.yaml"),
            "prompts/extract.yaml": """\
                messages:
                  - role: system
                    content: Extract the complaint.
                  - role: user
                    content: "Narrative: {{ source_narrative }} ({{ agency }})"
                template_variables:
                  - source_narrative
                  - unit
                """,
        },
    )
    assert findings(tmp_path, "benchmarks") == {
        ("prompts/extract.yaml", "LJ040", 5),
        ("prompts/extract.yaml", "LJ041", 8),
    }


@pytest.mark.parametrize(
    "prompt_file",
    ["prompts/missing.yaml", "../outside.yaml"],
    ids=["missing", "outside-the-root"],
)
def test_a_task_template_that_cannot_be_read_is_not_added(tmp_path: Path, prompt_file: str) -> None:
    root = tmp_path / "repo"
    write(root, {"benchmarks/cc.yaml": BENCHMARK.format(prompt_file=prompt_file)})
    write(tmp_path, {"outside.yaml": UNDECLARED})
    assert linter(root).discover([root / "benchmarks"]) == [root / "benchmarks/cc.yaml"]


def test_a_template_shared_by_two_benchmarks_is_linted_once(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "benchmarks/a.yaml": BENCHMARK.format(prompt_file="prompts/extract.yaml"),
            "benchmarks/b.yaml": BENCHMARK.replace("CC1", "CC2").format(prompt_file="./prompts/extract.yaml"),
            "prompts/extract.yaml": UNDECLARED,
        },
    )
    found = linter(tmp_path).discover([tmp_path / "benchmarks", tmp_path / "prompts"])
    assert sorted(p.relative_to(tmp_path).as_posix() for p in found) == [
        "benchmarks/a.yaml",
        "benchmarks/b.yaml",
        "prompts/extract.yaml",
    ]
