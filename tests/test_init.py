"""``llmjudge init``: a suite that passes ``llmjudge lint`` and its first pytest run, never written
over anything that exists."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import capital_judge
import jsonschema
import pytest
import yaml

from pytest_llmjudge.cli.main import main
from pytest_llmjudge.cli.schema import shipped_path

JUDGE = Path(capital_judge.__file__).read_text(encoding="utf-8")
WRITTEN = (
    "pytest.ini",
    "benchmarks/CAPITALS.yaml",
    "evaluators/llm-judge/capital_named_prompt.md",
    "app/task.py",
    "schemas/benchmark.schema.json",
    ".gitignore",
)


def init(target: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["init", str(target)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_suite_init_writes_passes_its_first_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = init(pytester.path, capsys)
    assert status == 0
    assert sorted(files(pytester.path)) == sorted(WRITTEN)
    assert "llmjudge lint evaluators benchmarks" in out
    assert "llmjudge compile benchmarks/CAPITALS.yaml" in out
    assert "pytest benchmarks --llmjudge-model local" in out
    pytester.makeconftest(JUDGE)
    result = pytester.runpytest("benchmarks", "-p", "no:cacheprovider", "--llmjudge-results=r.json")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=4)  # the prompt snapshot and three cases
    assert "snapshot recorded" in result.stdout.str()
    assert (pytester.path / "benchmarks/__snapshots__/CAPITALS.ambr").is_file()
    cases = json.loads((pytester.path / "r.json").read_text())["benchmarks"][0]["cases"]
    produced = {case["id"]: case["produced"] for case in cases}
    assert produced["france"]["output"] == "The capital of France is Paris."
    assert {p["source"] for p in produced.values()} == {"task"}  # the stub produced every output
    assert [case["id"] for case in cases if case.get("label")] == ["france"]


def test_the_files_init_writes_pass_lint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init(tmp_path, capsys)[0] == 0
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "evaluators", "benchmarks"]) == 0, capsys.readouterr()
    assert "No findings." in capsys.readouterr().out


def test_the_benchmark_names_its_schema_for_editors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init(tmp_path, capsys)[0] == 0
    benchmark = tmp_path / "benchmarks/CAPITALS.yaml"
    first = benchmark.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    schema_file = (benchmark.parent / first.split("$schema=", 1)[1]).resolve()
    assert schema_file.read_bytes() == shipped_path("benchmark").read_bytes()
    jsonschema.validate(yaml.safe_load(benchmark.read_text()), json.loads(schema_file.read_text()))


@pytest.mark.parametrize("existing", WRITTEN[:-1])
def test_init_writes_nothing_when_a_file_it_would_write_exists(
    existing: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / existing).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / existing).write_text("mine\n")
    before = files(tmp_path)
    status, out, err = init(tmp_path, capsys)
    assert status == 1 and not out
    refusal = f"{tmp_path / existing} exists; init never writes over a file; nothing was written"
    assert err == f"llmjudge init: {refusal}\n"
    assert files(tmp_path) == before


def test_an_existing_pyproject_gets_the_pytest_table_appended(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    original = '[project]\nname = "mine"\n\n[tool.ruff]\nline-length = 100'  # no final newline
    (pytester.path / "pyproject.toml").write_text(original)
    status, out, _ = init(pytester.path, capsys)
    assert status == 0 and "appended to pyproject.toml" in out
    text = (pytester.path / "pyproject.toml").read_text()
    assert text.startswith(original + "\n")
    config = tomllib.loads(text)
    assert config["tool"]["pytest"]["ini_options"]["llmjudge_paths"] == ["benchmarks"]
    assert config["project"] == {"name": "mine"} and config["tool"]["ruff"] == {"line-length": 100}
    assert not (pytester.path / "pytest.ini").exists()
    pytester.makeconftest(JUDGE)
    result = pytester.runpytest("benchmarks", "-p", "no:cacheprovider")
    assert result.ret == 0 and "configfile: pyproject.toml" in result.stdout.str()


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n", "already configures pytest"),
        ("pyproject.toml", "[tool.pytest\n", "is not valid TOML"),
        ("tox.ini", "[tox]\n\n[pytest]\naddopts = -q\n", "already configures pytest ([pytest])"),
        ("setup.cfg", "[tool:pytest]\naddopts = -q\n", "already configures pytest ([tool:pytest])"),
    ],
)
def test_init_refuses_a_folder_whose_pytest_configuration_it_would_change(
    name: str, text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / name).write_text(text)
    status, _, err = init(tmp_path, capsys)
    assert status == 1 and message in err and str(tmp_path / name) in err
    assert files(tmp_path) == {name: text.encode()}


def test_gitignore_gets_the_entry_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc")
    assert init(tmp_path / ".", capsys)[0] == 0
    assert (tmp_path / ".gitignore").read_text() == "*.pyc\n.llmjudge/\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / ".gitignore").write_text(".llmjudge\n")
    status, out, _ = init(other, capsys)
    assert status == 0 and ".gitignore" not in out
    assert (other / ".gitignore").read_text() == ".llmjudge\n"


def test_init_into_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").write_text("")
    status, _, err = init(tmp_path / "x", capsys)
    assert status == 1 and "is not a folder" in err
