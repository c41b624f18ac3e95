"""Mutation testing of the package, one package at a time.

    pip install -e '.[mutation]'
    python tools/mutation.py --package cost [--package gating …] [--min-score 90] [--max-children N] [--keep]
    python tools/mutation.py             # every package of [tool.mutmut.packages] (hours on 2 cores)
    python tools/mutation.py --table     # the last results as the README's Markdown table

mutmut (set up in pyproject.toml's ``[tool.mutmut]``) makes one small change at a time to each
function (a ``<`` for a ``<=``, a dropped argument, another string) and runs the tests that reach
the changed function. A mutant that no test notices "survived". Each package runs in its own
scratch folder, ``mutants/<package>/``: a copy of the package, the tests and a pyproject.toml
whose ``[tool.mutmut]`` mutates only that package (``pytest_llmjudge/<package>/``; ``plugin``
and ``hookspecs`` are the top-level modules) against the test selection that
``[tool.mutmut.packages]`` names for it. The working tree is not changed.

Prints, per package, killed / survived / total, the score (killed ÷ tested, as ``mutmut badge``
counts it) and the wall time, then every mutant not killed (``cd mutants/<package> && mutmut
show NAME`` shows its diff); exits 1 when a package's score is under ``--min-score``.
``--keep`` reuses each package's results from the last run for unchanged code: its killed
mutants stay killed, and the others (survived, no tests, suspicious) are tested again with the
tests as they are now.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "pytest_llmjudge"
MUTANTS = ROOT / "mutants"
# what the tests read from the repository besides the package and the tests
DATA = (
    "evaluators",
    "benchmarks",
    "rubrics",
    "data",
    "examples",
    "docs",
    "tools",
    ".pre-commit-hooks.yaml",
    "README.md",
)
# Tests left out of every selection: one reads the package's source text, which mutmut rewrites
# (it guards the layout, not what the code does, and fails on every mutant alike); the others
# start xdist workers, processes of their own that cannot find mutmut's configuration (they run
# in the test's folder) and whose calls mutmut could not count anyway; the last is a hang guard
# with a time limit, which mutmut's wrapping of every call pushes past it on the unchanged code.
LEFT_OUT = (
    "tests/lint/test_docs.py::test_the_linter_does_not_import_pytest",
    "tests/test_compile.py::test_snapshots_under_xdist",
    "tests/test_scheduler.py::test_exitfirst_and_maxfail_cancel_pending_calls[options2-12]",
    "tests/test_results.py::test_results_file_from_xdist_workers",
    "tests/test_malformed.py::test_broken_file_does_not_stop_other_benchmarks_under_xdist",
    "tests/test_collection.py::test_xdist_runs_benchmarks_in_parallel",
    "tests/test_gates_output.py::test_under_xdist_a_partial_selection_is_a_partial_gate",
    "tests/test_gates_output.py::test_under_xdist_failures_carry_their_reason_in_the_short_summary_and_junit",
    "tests/test_cache_integrity.py::test_a_damaged_cache_is_one_usage_error_in_every_mode[-n2-zeros]",
    "tests/test_cache_integrity.py::test_a_damaged_cache_is_one_usage_error_in_every_mode[-n2-foreign]",
    "tests/test_prompt_file.py::test_long_hostile_prompts_parse_and_compile_quickly",
)
# The package's module-level memo tables (``_NAME: dict[...] = {}``, filled on first use): what
# they hold was built by the unchanged code (``tests/test_mutants_tool.py`` finds every one).
MEMOS = (
    "pytest_llmjudge.judging.rendering._SNAPSHOT_TEMPLATES",
    "pytest_llmjudge.judging.pairwise_judge._AGENTS",
    "pytest_llmjudge.judging.pairwise_judge._TOOLS",
    "pytest_llmjudge.models.identity._CLASSES",
)
# Appended to the scratch's tests/conftest.py. mutmut forks each mutant's run from a process that
# already ran the tests on the unchanged code: a function behind a cache (``functools.cache``,
# ``lru_cache``) or a memo table would answer from it, and the mutants of what built it would go
# untested. Each test starts with the package's caches and memo tables empty.
FRESH_CACHES = f"""


_MUTATION_MEMOS = {MEMOS!r}


def _mutation_clear_caches():
    import sys as _sys

    for _name, _module in list(_sys.modules.items()):
        if _name.startswith("pytest_llmjudge") and _module is not None:
            for _value in list(vars(_module).values()):
                if callable(getattr(_value, "cache_clear", None)):
                    _value.cache_clear()
    for _memo in _MUTATION_MEMOS:
        _module_name, _, _table = _memo.rpartition(".")
        if _module_name in _sys.modules:
            getattr(_sys.modules[_module_name], _table).clear()


@pytest.fixture(autouse=True)
def _mutation_fresh_caches():
    _mutation_clear_caches()
    yield
"""
NOT_KILLED = ("survived", "no tests", "suspicious", "segfault")
TOP_LEVEL = ("plugin", "hookspecs")  # modules beside the packages, each mutated as one "package"
SUMMARY = "summary.json"
_COUNTS = ("killed", "survived", "no_tests", "timeout", "suspicious", "skipped", "total")
# mutmut's exit codes of a decided mutant that a later run keeps: killed (1, 3), skipped (34),
# timeout (36, and the CPU-limit signals), caught by the type check (37)
_DECIDED = frozenset({1, 3, 34, 36, 37, 24, -24, 152, 255})


@dataclass(frozen=True)
class PackageResult:
    """One package's mutation figures, as ``mutmut export-cicd-stats`` counts them."""

    package: str
    killed: int
    survived: int
    no_tests: int
    timeout: int
    suspicious: int
    skipped: int
    total: int
    seconds: float
    not_killed: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        """Killed (a timeout counts: the tests noticed) out of the mutants tested, in percent."""
        tested = self.total - self.skipped
        return 100.0 if tested <= 0 else 100.0 * (self.killed + self.timeout) / tested


def score(stats: dict[str, int]) -> float:
    """Killed (a timeout counts) out of the mutants tested, in percent, from mutmut's stats."""
    tested = stats["total"] - stats["skipped"]
    return 100.0 if tested <= 0 else 100.0 * (stats["killed"] + stats["timeout"]) / tested


def _mutmut() -> str:
    """The mutmut of this interpreter's environment, else the one on PATH."""
    beside = Path(sys.executable).parent / "mutmut"
    found = str(beside) if beside.exists() else shutil.which("mutmut")
    if found is None:
        raise SystemExit("mutmut is not installed: pip install -e '.[mutation]'")
    return found


def _settings() -> tuple[str, dict[str, list[str]]]:
    """The repository's pyproject.toml without its ``[tool.mutmut…]`` tables, and the test
    selection of each package."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    packages: dict[str, list[str]] = tomllib.loads(text)["tool"]["mutmut"]["packages"]
    without = re.sub(r"(?ms)^\[tool\.mutmut(\.[a-z]+)?\]\n.*?(?=^\[|\Z)", "", text)
    return without, packages


def _mutated_path(package: str) -> str:
    return f"{PACKAGE}/{package}.py" if package in TOP_LEVEL else f"{PACKAGE}/{package}/*"


def _scratch(package: str, pyproject: str, tests: list[str], keep: bool) -> Path:
    """``mutants/<package>/``: the package, the tests and a pyproject.toml mutating only it."""
    where = MUTANTS / package
    if not keep:
        shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".llmjudge")
    for name in (PACKAGE, "tests", *DATA):
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, where / name)
            continue
        shutil.rmtree(where / name, ignore_errors=True)
        shutil.copytree(ROOT / name, where / name, ignore=ignore)
    with (where / "tests" / "conftest.py").open("a", encoding="utf-8") as conftest:
        conftest.write(FRESH_CACHES)
    deselected = [f"--deselect={t}" for t in left_out(tests)]
    table = {
        "source_paths": [PACKAGE],
        "also_copy": list(DATA),
        "only_mutate": [_mutated_path(package)],
        # only the package's own left-out tests: another package's list changing leaves it alone
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q", *deselected],
        "pytest_add_cli_args_test_selection": tests,
    }
    lines = ["[tool.mutmut]", *(f"{key} = {json.dumps(value)}" for key, value in table.items())]
    (where / "pyproject.toml").write_text(pyproject.rstrip() + "\n\n" + "\n".join(lines) + "\n")
    return where


def left_out(tests: Sequence[str]) -> list[str]:
    """The tests of ``LEFT_OUT`` that the selection ``tests`` (files and folders) holds."""
    return [
        t for t in LEFT_OUT if any(t.split("::")[0] == s or t.startswith(s.rstrip("/") + "/") for s in tests)
    ]


def _retest_not_killed(where: Path) -> int:
    """Forget the last run's verdict on every mutant that was not killed, so that ``mutmut run``
    tests it again (mutmut keeps every verdict, so new tests would never reach a survivor)."""
    reset = 0
    for meta in (where / "mutants").rglob("*.meta"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes: dict[str, int | None] = data.get("exit_code_by_key", {})
        again = [key for key, code in codes.items() if code is not None and code not in _DECIDED]
        if again:
            codes.update(dict.fromkeys(again))
            meta.write_text(json.dumps(data, indent=4), encoding="utf-8")
            reset += len(again)
    return reset


def _mutmut_run(mutmut: str, where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([mutmut, *args], cwd=where, capture_output=True, text=True, check=False)


def run_package(
    package: str, tests: list[str], pyproject: str, max_children: int, keep: bool
) -> PackageResult:
    """Mutate one package in its scratch folder; its figures are kept in ``summary.json``."""
    mutmut = _mutmut()
    where = _scratch(package, pyproject, tests, keep)
    if keep:
        _retest_not_killed(where)
    started = time.monotonic()
    run = _mutmut_run(mutmut, where, "run", "--max-children", str(max_children))
    elapsed = time.monotonic() - started
    (where / "run.log").write_text(run.stdout + run.stderr)
    if run.returncode != 0:
        print((run.stdout + run.stderr)[-4000:], file=sys.stderr)
        raise SystemExit(f"mutmut run failed for {package} ({run.returncode}); its log: {where / 'run.log'}")
    exported = _mutmut_run(mutmut, where, "export-cicd-stats")
    if exported.returncode != 0:
        raise SystemExit(exported.stdout + exported.stderr)
    stats: dict[str, int] = json.loads((where / "mutants" / "mutmut-cicd-stats.json").read_text())
    listed = _mutmut_run(mutmut, where, "results").stdout.splitlines()
    not_killed = tuple(sorted(line.strip() for line in listed if line.rpartition(": ")[2] in NOT_KILLED))
    counts = {name: stats[name] for name in _COUNTS}
    result = PackageResult(package, **counts, seconds=elapsed, not_killed=not_killed)
    (where / SUMMARY).write_text(json.dumps(asdict(result), indent=1))
    return result


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def line(result: PackageResult) -> str:
    """One package's figures in a line of the run's output."""
    return (
        f"{result.package}: {result.killed} killed, {result.survived} survived, {result.total} total "
        f"({result.no_tests} no tests, {result.timeout} timeout, {result.suspicious} suspicious, "
        f"{result.skipped} skipped): {result.score:.1f} % killed in {_duration(result.seconds)}"
    )


def table(results: Sequence[PackageResult]) -> str:
    """The README's Markdown table: one row per package, then all of them together."""
    rows = ["| package | killed | survived | total | killed % | time |", "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        figures = f"{r.killed} | {r.survived} | {r.total} | {r.score:.1f} | {_duration(r.seconds)}"
        rows.append(f"| `{r.package}/` | {figures} |")
    if len(results) > 1:
        counts = {name: sum(getattr(r, name) for r in results) for name in _COUNTS}
        total = PackageResult("all", **counts, seconds=sum(r.seconds for r in results))
        rows.append(
            f"| all | {total.killed} | {total.survived} | {total.total} | {total.score:.1f} | "
            f"{_duration(total.seconds)} |"
        )
    return "\n".join(rows)


def saved(package: str) -> PackageResult | None:
    """A package's figures from its last run, if it ran."""
    path = MUTANTS / package / SUMMARY
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    data["not_killed"] = tuple(data["not_killed"])
    return PackageResult(**data)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mutation.py", description=__doc__.splitlines()[0])
    parser.add_argument("--package", action="append", help="a package of [tool.mutmut.packages] (repeatable)")
    parser.add_argument("--table", action="store_true", help="print the last results as a Markdown table")
    parser.add_argument("--min-score", type=float, default=90.0, help="lowest passing score, in %%")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="parallel mutants")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="resume from mutants/<package>/: killed mutants stay killed, the others are tested again",
    )
    args = parser.parse_args(argv)
    pyproject, packages = _settings()
    chosen = args.package or list(packages)
    if unknown := [p for p in chosen if p not in packages]:
        parser.error(f"no test selection for {', '.join(unknown)} in [tool.mutmut.packages]")
    if args.table:
        found = [r for r in map(saved, chosen) if r is not None]
        print(table(found) if found else "no results yet: run tools/mutation.py --package NAME first")
        return 0
    failing = 0
    for package in chosen:
        result = run_package(package, packages[package], pyproject, args.max_children, args.keep)
        print("\n".join(f"  {name}" for name in result.not_killed))
        print(line(result), flush=True)
        failing += result.score < args.min_score
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
