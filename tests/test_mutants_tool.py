"""tools/mutation.py without running mutmut: the README table from each package's last results,
a resumed run testing again what it did not kill, and an unknown package refused."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def tool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "mutation_tool", module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "MUTANTS", tmp_path)
    return module


def _summary(where: Path, package: str, killed: int, survived: int, no_tests: int, seconds: float) -> None:
    (where / package).mkdir()
    figures = {"package": package, "killed": killed, "survived": survived, "no_tests": no_tests}
    figures |= {"timeout": 0, "suspicious": 0, "skipped": 0, "total": killed + survived + no_tests}
    figures |= {"seconds": seconds, "not_killed": []}
    (where / package / "summary.json").write_text(json.dumps(figures))


def test_the_table_has_a_row_per_measured_package_and_the_total(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _summary(tmp_path, "cost", 90, 8, 2, 754.0)
    _summary(tmp_path, "gating", 950, 50, 0, 61.0)
    assert tool.main(["--table", "--package", "cost", "--package", "gating", "--package", "tasks"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "| package | killed | survived | total | killed % | time |",
        "|---|---:|---:|---:|---:|---:|",
        "| `cost/` | 90 | 8 | 100 | 90.0 | 12m34s |",
        "| `gating/` | 950 | 50 | 1000 | 95.0 | 1m01s |",
        "| all | 1040 | 58 | 1100 | 94.5 | 13m35s |",
    ]


def test_a_resumed_run_tests_again_what_it_did_not_kill(tool: ModuleType, tmp_path: Path) -> None:
    meta = tmp_path / "mutants" / "pytest_llmjudge" / "cost" / "usage.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {"killed": 1, "survived": 0, "no_tests": 33, "timeout": 36, "unchecked": None, "odd": 35}
    meta.write_text(json.dumps({"exit_code_by_key": codes, "other": 1}))
    assert tool._retest_not_killed(tmp_path) == 3
    kept = json.loads(meta.read_text())
    assert kept["exit_code_by_key"] == {
        "killed": 1,
        "survived": None,
        "no_tests": None,
        "timeout": 36,
        "unchecked": None,
        "odd": None,
    }
    assert kept["other"] == 1


def test_each_test_of_a_scratch_starts_with_the_package_caches_empty(
    tool: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mutmut forks each mutant's run from a process that ran the unchanged code: without this, a
    cached function (a benchmark's rubric) answers from its cache and the mutants of what it calls
    never run."""
    from pytest_llmjudge.judging import rendering

    monkeypatch.setattr(tool, "DATA", ())
    where = tool._scratch("compile", "[project]\nname = 'x'\n", ["tests/test_compile.py"], keep=False)
    conftest = (where / "tests" / "conftest.py").read_text()
    assert conftest == (ROOT / "tests" / "conftest.py").read_text() + tool.FRESH_CACHES
    namespace: dict[str, object] = {"pytest": pytest}
    exec(tool.FRESH_CACHES, namespace)  # what the scratch's conftest defines
    rendering._indented('{"b": 1, "a": 2}')
    assert rendering._indented.cache_info().currsize > 0
    clear = namespace["_mutation_clear_caches"]
    assert callable(clear)
    clear()
    assert rendering._indented.cache_info().currsize == 0


def test_a_package_without_a_test_selection_is_refused() -> None:
    ran = subprocess.run(
        [sys.executable, "tools/mutation.py", "--table", "--package", "nowhere"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 2
    assert "no test selection for nowhere in [tool.mutmut.packages]" in ran.stderr


def test_a_package_leaves_out_only_the_left_out_tests_its_selection_holds(tool: ModuleType) -> None:
    left_out, LEFT_OUT = tool.left_out, tool.LEFT_OUT
    assert left_out(["tests/lint"]) == ["tests/lint/test_docs.py::test_the_linter_does_not_import_pytest"]
    assert left_out(["tests/test_cache.py"]) == []  # not tests/test_cache_integrity.py's
    integrity = [t for t in LEFT_OUT if t.startswith("tests/test_cache_integrity.py::")]
    assert (
        len(integrity) == 2
        and left_out(["tests/test_cache.py", "tests/test_cache_integrity.py"]) == integrity
    )
    assert left_out(["tests/test"]) == []  # a folder name is whole, not a prefix of a file's


def test_every_module_memo_table_is_emptied_before_each_mutants_test(tool: ModuleType) -> None:
    """A memo table filled by the unchanged code would keep a mutant of what fills it untested."""
    import re

    found = set()
    for path in sorted((ROOT / "pytest_llmjudge").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for name in re.findall(r"^(_[A-Z_]+)(?:: [^=\n]+)? = \{\}", path.read_text(), re.M):
            found.add(f"{module}.{name}")
    assert found and sorted(found) == sorted(tool.MEMOS)
    namespace: dict[str, object] = {"pytest": pytest}
    exec(tool.FRESH_CACHES, namespace)  # what the scratch's conftest defines
    from pytest_llmjudge.models import identity

    identity._CLASSES[int] = int
    namespace["_mutation_clear_caches"]()  # type: ignore[operator]
    assert identity._CLASSES == {}
