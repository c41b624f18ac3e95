"""Every corpus snippet yields exactly the findings its first line expects."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.lint.conftest import CORPUS, corpus_files, corpus_linter, expected, positions


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_corpus_file_has_expected_findings(path: Path) -> None:
    assert positions(corpus_linter(path).lint_file(path)) == expected(path)


def test_corpus_is_large_and_balanced() -> None:
    prompts = [p for p in corpus_files() if p.suffix == ".md"]
    kinds = Counter("flag" if expected(p) else "clean" for p in prompts)
    assert len(prompts) >= 40
    assert kinds["clean"] >= kinds["flag"], "as many must-not-flag snippets as must-flag"
    logic = Counter(bool(expected(p)) for p in (CORPUS / "logic").iterdir() if p.suffix == ".md")
    assert logic[True] <= logic[False], "the logic corpus has at least as many must-not-flag as must-flag"


def test_corpus_covers_the_hard_cases() -> None:
    names = " ".join(p.name for p in corpus_files())
    for topic in ("crlf", "unicode", "example", "multiline", "nested", "empty", "four", "single_and"):
        assert topic in names, topic
    raw = {p.name: p.read_bytes() for p in corpus_files()}
    assert all(b"\r\n" in data for name, data in raw.items() if "crlf" in name)


def test_lj001_precision_and_recall_on_realistic_automatic_fail_sections() -> None:
    """Production-style sections: LJ001 must stay quiet on correct ones and find split ones."""
    must_flag = sorted((CORPUS / "compound" / "must-flag").glob("*.md"))
    must_not_flag = sorted((CORPUS / "compound" / "must-not-flag").glob("*.md"))
    assert len(must_flag) >= 20 and len(must_not_flag) >= 40
    assert all(expected(p) and {c for c, _ in expected(p)} == {"LJ001"} for p in must_flag)
    assert all(not expected(p) for p in must_not_flag)

    def flagged(path: Path) -> bool:
        return any(d.code == "LJ001" for d in corpus_linter(path).lint_file(path))

    assert [p.name for p in must_not_flag if flagged(p)] == []
    assert sum(flagged(p) for p in must_flag) >= 0.9 * len(must_flag)
