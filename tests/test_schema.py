"""``llmjudge schema``: the JSON Schemas an editor validates files with agree with the loader.

They accept every benchmark, cases file and prompt template of the repository and its examples,
and reject the mistakes the loader rejects. The files shipped in the package are what the
command prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from pytest_llmjudge.cli.main import main
from pytest_llmjudge.cli.schema import KINDS, shipped_path
from pytest_llmjudge.suite.detect import is_benchmark_file
from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.files import load_benchmark
from pytest_llmjudge.tasks.prompt_template import load_prompt_template

REPO = Path(__file__).resolve().parent.parent
# each folder holding benchmarks is a rootdir: paths in its files are relative to it
ROOTS = (REPO, REPO / "examples" / "release", REPO / "examples" / "calibration")


def printed(kind: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["schema", kind]) == 0
    return capsys.readouterr().out


def validator(kind: str) -> jsonschema.protocols.Validator:
    schema = json.loads(shipped_path(kind).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def as_editor_sees(text: str) -> Any:
    """YAML as yaml-language-server validates it: JSON values, mapping keys as strings."""
    return json.loads(json.dumps(yaml.safe_load(text), default=str))


def benchmark_files() -> list[tuple[Path, Path]]:
    found = []
    for root in ROOTS:
        for path in sorted((root / "benchmarks").rglob("*.y*ml")):
            if is_benchmark_file(path, ["benchmarks"], root):
                found.append((root, path))
    return found


def errors(kind: str, data: Any) -> list[str]:
    """Every message, also those under an ``anyOf`` (``threshold: 0.9 | null``), as an editor lists them."""

    def messages(error: jsonschema.ValidationError) -> list[str]:
        return [error.message, *(m for sub in error.context or () for m in messages(sub))]

    return [m for error in validator(kind).iter_errors(data) for m in messages(error)]


@pytest.mark.parametrize("kind", KINDS)
def test_the_shipped_schema_is_what_the_command_prints(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    shipped = shipped_path(kind).read_text(encoding="utf-8")
    assert printed(kind, capsys) == shipped, (
        f"regenerate: llmjudge schema {kind} > pytest_llmjudge/schemas/{kind}.schema.json"
    )
    assert json.loads(shipped)["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_path_option_names_the_shipped_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "cases", "--path"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == shipped_path("cases") and path.is_file()


def test_the_results_schema_is_the_one_results_files_are_validated_with() -> None:
    from pytest_llmjudge.reporting.results_file import SCHEMA_PATH

    assert shipped_path("results").read_bytes() == SCHEMA_PATH.read_bytes()


def test_every_benchmark_file_of_the_repository_and_its_examples_is_accepted() -> None:
    files = benchmark_files()
    assert len(files) >= 8  # benchmarks/, examples/release, examples/calibration
    for root, path in files:
        assert errors("benchmark", as_editor_sees(path.read_text(encoding="utf-8"))) == [], path
        load_benchmark(path, str(path.relative_to(root)), root)  # and the loader agrees


def test_every_cases_file_and_prompt_template_they_name_is_accepted() -> None:
    named: dict[str, set[Path]] = {"cases": set(), "prompt-template": set()}
    for root, path in benchmark_files():
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key in ("cases_file", "calibration_file"):
            if spec.get(key):
                named["cases"].add(root / spec[key])
        task = spec.get("task")
        if isinstance(task, dict):
            named["prompt-template"].add(root / task["prompt_file"])
    assert len(named["cases"]) >= 2 and len(named["prompt-template"]) >= 1
    for path in named["cases"]:
        text = path.read_text(encoding="utf-8")
        cases = [json.loads(line) for line in text.splitlines() if line.strip()]
        assert errors("cases", cases) == [], path
        assert errors("cases", {"cases": cases}) == [], path
    for path in named["prompt-template"]:
        assert errors("prompt-template", as_editor_sees(path.read_text(encoding="utf-8"))) == [], path
        load_prompt_template(path, path.name)


BENCHMARK = """\
code: X-OK1
threshold: 0.9
criticality: hard_gate
concept: The output says hello.
inclusion_criteria: Apply when there is output.
cases:
  - id: hello
    candidate_output: hello
    label: pass
"""

WRONG_BENCHMARKS = {
    "misspelt key": ("threshold: 0.9", "treshold: 0.9", "'treshold' was unexpected"),
    "wrong type": ("threshold: 0.9", "threshold: high", "'high' is not valid"),
    "number out of range": ("threshold: 0.9", "threshold: 1.5", "1.5 is not valid"),
    "unknown criticality": ("criticality: hard_gate", "criticality: hard_gat", "'hard_gat' is not one of"),
    "misspelt case key": ("candidate_output: hello", "candidate_ouput: hello", "'candidate_ouput' was"),
    "unknown label": ("label: pass", "label: passed", "'passed' is not one of"),
    "bad case id": ("- id: hello", "- id: ~hello", "'~hello' does not match"),
    "cases not a list": (
        "cases:\n  - id: hello\n    candidate_output: hello\n    label: pass\n",
        "cases: {id: hello, candidate_output: hello}\n",
        "is not of type 'array'",
    ),
    "misspelt judge key": ("threshold: 0.9", "threshold: 0.9\njudge: {temprature: 0}", "'temprature' was"),
    "task of neither kind": ("threshold: 0.9", "threshold: 0.9\ntask: {model: m}", "is not valid"),
}


def test_a_correct_benchmark_is_accepted() -> None:
    assert errors("benchmark", as_editor_sees(BENCHMARK)) == []


@pytest.mark.parametrize("old, new, message", WRONG_BENCHMARKS.values(), ids=WRONG_BENCHMARKS.keys())
def test_a_wrong_benchmark_is_rejected_by_the_schema_and_the_loader(
    old: str, new: str, message: str, tmp_path: Path
) -> None:
    text = BENCHMARK.replace(old, new, 1)
    assert text != BENCHMARK
    found = errors("benchmark", as_editor_sees(text))
    assert any(message in error for error in found), found
    path = tmp_path / "benchmarks" / "X-OK1.yaml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError):
        load_benchmark(path, "benchmarks/X-OK1.yaml", tmp_path)


WRONG_TEMPLATES = {
    "both formats": "prompt: {template: hi}\nmessages: [{role: user, content: hi}]\n",
    "misspelt key": "prompt: {templte: hi}\n",
    "unknown role": "messages: [{role: human, content: hi}]\n",
    "no messages": "messages: []\n",
}


@pytest.mark.parametrize("text", WRONG_TEMPLATES.values(), ids=WRONG_TEMPLATES.keys())
def test_a_wrong_prompt_template_is_rejected_by_the_schema_and_the_loader(text: str, tmp_path: Path) -> None:
    assert errors("prompt-template", as_editor_sees(text))
    path = tmp_path / "prompt.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError):
        load_prompt_template(path, "prompt.yaml")


def test_a_cases_file_with_a_wrong_case_is_rejected() -> None:
    assert errors("cases", [{"id": "a", "ground_truth": "x"}]) == []
    assert errors("cases", [{"id": "a", "groundtruth": "x"}])
    assert errors("cases", {"cases": [{"id": "a", "label": "maybe"}]})
    assert errors("cases", {"case": [{"id": "a"}]})
