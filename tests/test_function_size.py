"""No function of the package runs over 60 lines (decorators and docstring included): a longer
one does several things, and each of them deserves a name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_llmjudge

PACKAGE_DIR = Path(pytest_llmjudge.__file__).parent
REPO = PACKAGE_DIR.parent
MAX_FUNCTION_LINES = 60

# Functions still over the limit while they are being split: each entry must still be too long
# (a stale entry fails too), so the list only shrinks.
BEING_SPLIT: set[str] = set()


def function_lengths(path: Path, root: Path = REPO) -> dict[str, int]:
    """Each function's (and method's) lines, from its first decorator to its last line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    where = path.relative_to(root).as_posix()
    lengths = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            lengths[f"{where}::{node.name}@{node.lineno}"] = node.end_lineno - first + 1
    return lengths


def too_long() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for name, lines in function_lengths(path).items():
            if lines > MAX_FUNCTION_LINES:
                found[name] = lines
    return found


def test_no_function_is_over_60_lines() -> None:
    over = {name: lines for name, lines in too_long().items() if name.partition("@")[0] not in BEING_SPLIT}
    assert not over, "functions over 60 lines:\n" + "\n".join(f"  {n}: {lines}" for n, lines in over.items())


def test_every_function_being_split_is_still_too_long() -> None:
    still = {name.partition("@")[0] for name in too_long()}
    assert not BEING_SPLIT - still, (
        f"now short enough, take them off BEING_SPLIT: {sorted(BEING_SPLIT - still)}"
    )


def test_the_check_counts_from_the_decorator_to_the_last_line(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    source = tmp_path / "probe.py"
    source.write_text(f"@staticmethod\ndef long_one():\n{body}\n\n\ndef short_one():\n    pass\n")
    assert function_lengths(source, tmp_path) == {
        "probe.py::long_one@2": MAX_FUNCTION_LINES + 2,
        f"probe.py::short_one@{MAX_FUNCTION_LINES + 5}": 2,
    }
