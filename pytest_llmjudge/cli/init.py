"""``llmjudge init [DIR]``: a small benchmark suite that runs, to start from.

It writes pytest's configuration (``pytest.ini``, or a ``[tool.pytest.ini_options]`` table
appended to an existing ``pyproject.toml``), one benchmark of three cases (one labelled by a
human), its judge prompt in the canonical syntax with a comment on each section, a Python task
stub, the benchmark file's JSON Schema for editors and a ``.gitignore`` entry for ``.llmjudge/``.
It never writes over a file: if any file it would write exists, it writes nothing.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .schema import shipped_path

SCAFFOLD = Path(__file__).resolve().with_name("scaffold")
BENCHMARK = "benchmarks/CAPITALS.yaml"
# (where the file goes below DIR, the scaffold file it is copied from)
FILES = (
    (BENCHMARK, SCAFFOLD / "CAPITALS.yaml"),
    ("evaluators/llm-judge/capital_named_prompt.md", SCAFFOLD / "capital_named_prompt.md"),
    ("app/task.py", SCAFFOLD / "task.py"),
    ("schemas/benchmark.schema.json", shipped_path("benchmark")),
)
IGNORED = ".llmjudge/"  # the plugin's caches, runs and reports
NEXT = (
    ("llmjudge lint evaluators benchmarks", "check the judge prompt and the benchmark"),
    (f"llmjudge compile {BENCHMARK}", "see the exact request the judge receives"),
    ("pytest benchmarks --llmjudge-model local", "judge the cases offline (the 'local' extra)"),
)


class InitError(Exception):
    """A reason to write nothing."""


@dataclass(frozen=True)
class Plan:
    """What init writes: new files, and text appended to files that exist."""

    create: tuple[tuple[Path, str], ...]
    append: tuple[tuple[Path, str], ...]


def plan(target: Path) -> Plan:
    """Everything init would write into ``target``; ``InitError`` if it would replace anything."""
    if target.exists() and not target.is_dir():
        raise InitError(f"{target} exists and is not a folder")
    create = [(target / relative, source.read_text(encoding="utf-8")) for relative, source in FILES]
    append: list[tuple[Path, str]] = []
    pyproject = target / "pyproject.toml"
    _refuse_other_pytest_config(target)
    if pyproject.is_file():
        append.append((pyproject, _pytest_table(pyproject)))
    else:
        create.insert(0, (target / "pytest.ini", (SCAFFOLD / "pytest.ini").read_text(encoding="utf-8")))
    for path, _ in create:
        if path.exists() or path.is_symlink():
            raise InitError(f"{path} exists; init never writes over a file")
    gitignore = target / ".gitignore"
    if not gitignore.exists():
        create.append((gitignore, IGNORED + "\n"))
    elif entry := _gitignore_entry(gitignore):
        append.append((gitignore, entry))
    return Plan(tuple(create), tuple(append))


def _refuse_other_pytest_config(target: Path) -> None:
    """pytest reads one configuration file; a second one would silently be ignored, or win."""
    pytest_ini = target / "pytest.ini"
    if pytest_ini.exists():
        raise InitError(f"{pytest_ini} exists; init never writes over a file")
    for name, section in (("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")):
        path = target / name
        if path.is_file() and section in (line.strip() for line in _text(path).splitlines()):
            raise InitError(
                f"{path} already configures pytest ({section}); add 'llmjudge_paths = benchmarks' there"
            )


def _pytest_table(pyproject: Path) -> str:
    """The ``[tool.pytest.ini_options]`` table to append, once the file is known to lack it."""
    text = _text(pyproject)
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError as exc:
        raise InitError(f"{pyproject} is not valid TOML ({exc})") from None
    if isinstance(tool, dict) and "pytest" in tool:
        raise InitError(
            f"{pyproject} already configures pytest ([tool.pytest]); "
            'add llmjudge_paths = ["benchmarks"] to its [tool.pytest.ini_options] table'
        )
    table = (SCAFFOLD / "pytest-table.toml").read_text(encoding="utf-8")
    return table if text.endswith("\n") or not text else "\n" + table


def _gitignore_entry(path: Path) -> str:
    """The ``.llmjudge/`` line to add to ``.gitignore``, or "" when it is there already."""
    text = _text(path)
    if any(line.strip() in {IGNORED, IGNORED.rstrip("/"), "/" + IGNORED} for line in text.splitlines()):
        return ""
    return ("" if text.endswith("\n") or not text else "\n") + IGNORED + "\n"


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InitError(f"cannot read {path}: {exc}") from None


def write(planned: Plan) -> None:
    """Create the new files (each exclusively: a file that appeared meanwhile is not replaced),
    then append to the existing ones."""
    for path, text in planned.create:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as file:
            file.write(text)
    for path, text in planned.append:
        with path.open("a", encoding="utf-8") as file:
            file.write(text)


def _init(args: argparse.Namespace) -> int:
    target = Path(args.dir)
    try:
        planned = plan(target)
        write(planned)
    except InitError as exc:
        print(f"llmjudge init: {exc}; nothing was written", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"llmjudge init: cannot write: {exc}", file=sys.stderr)
        return 1
    _report(target, planned)
    return 0


def _report(target: Path, planned: Plan) -> None:
    print(f"llmjudge init: a benchmark suite in {target}")
    for path, _ in planned.create:
        print(f"  wrote {path.relative_to(target).as_posix()}")
    for path, _ in planned.append:
        print(f"  appended to {path.relative_to(target).as_posix()}")
    print("\nNext:")
    if target.resolve() != Path.cwd().resolve():
        print(f"  cd {target}")
    width = max(len(command) for command, _ in NEXT)
    for command, why in NEXT:
        print(f"  {command.ljust(width)}  # {why}")


def add_init_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "init",
        help="write a small benchmark suite that runs",
        description="Write pytest's configuration, one benchmark of three cases, its judge prompt, a "
        "Python task stub, the benchmark file's JSON Schema and a .gitignore entry for .llmjudge/ "
        "into DIR. Nothing is written over: if any of these files exists, nothing is written.",
    )
    parser.add_argument("dir", nargs="?", default=".", metavar="DIR", help="default: the current folder")
    parser.set_defaults(handler=_init)
