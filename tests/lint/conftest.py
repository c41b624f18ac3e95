"""Shared helpers for the linter tests; the corpus holds deliberately broken files, never collected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_llmjudge.lint import Diagnostic, Linter, LintSettings

collect_ignore = ["corpus"]

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
# Rules each corpus folder is about; a snippet is not a whole prompt, so other rules stay off.
CORPUS_RULES = {
    "logic": ["LJ001", "LJ002", "LJ003"],
    "compound": ["LJ001"],
    "weak": ["LJ001", "LJ004"],
    "structure": ["LJ010", "LJ011", "LJ012", "LJ013", "LJ014", "LJ015"],
    "legacy": ["LJ020", "LJ021"],
    "templates": ["LJ040", "LJ041"],
    "project": ["LJ030", "LJ031", "LJ032", "LJ033"],
}
_EXPECT = re.compile(r"expect:\s*(?P<codes>.*?)\s*(?:-->)?\s*$")


def corpus_files() -> list[Path]:
    return sorted(
        p
        for p in CORPUS.rglob("*")
        if p.is_file() and p.suffix in {".md", ".yaml"} and not p.name.startswith(".")
    )


def expected(path: Path) -> set[tuple[str, int]]:
    """``(code, line)`` pairs from the first line: ``<!-- expect: LJ001@3 -->``, ``# expect: none``."""
    first = path.read_bytes().decode("utf-8").splitlines()[0]
    found = _EXPECT.search(first)
    assert found, f"{path.name}: first line must be an 'expect:' comment"
    codes = found.group("codes")
    if codes == "none":
        return set()
    return {(code, int(line)) for code, line in (item.split("@") for item in codes.split())}


def corpus_linter(path: Path, root: Path | None = None) -> Linter:
    folder = path.relative_to(CORPUS).parts[0]
    base = root or (CORPUS / folder)
    return Linter(LintSettings(root=base), select=CORPUS_RULES[folder], base=base)


def positions(diagnostics: list[Diagnostic]) -> set[tuple[str, int]]:
    return {(d.code, d.line) for d in diagnostics}


@pytest.fixture
def repo() -> Path:
    return REPO
