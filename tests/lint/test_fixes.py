"""Fix round-trips: a fixed file re-lints clean, a second --fix changes nothing, line endings stay."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_llmjudge.lint import Edit, Fix
from pytest_llmjudge.lint.fixes import apply_fixes
from tests.lint.conftest import CORPUS, corpus_files, corpus_linter, positions

FULLY_FIXABLE = [
    "logic/flag_implicit_and_prompt.md",
    "structure/flag_missing_uncertainty_prompt.md",
    "structure/flag_missing_rubric_and_scope_prompt.md",
    "structure/flag_unnumbered_pass_conditions_prompt.md",
    "structure/flag_pass_conditions_gap_prompt.md",
    "legacy/flag_focus_on_prompt.md",
    "legacy/flag_focus_on_inline_with_scope_prompt.md",
    "legacy/flag_note_clause_prompt.md",
]


def _copy(relative: str, tmp_path: Path) -> Path:
    target = tmp_path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CORPUS / relative, target)
    return target


@pytest.mark.parametrize("relative", FULLY_FIXABLE)
def test_fix_then_relint_is_clean_and_idempotent(relative: str, tmp_path: Path) -> None:
    path = _copy(relative, tmp_path)
    linter = corpus_linter(CORPUS / relative, root=path.parent)
    before = linter.lint_file(path)
    assert before and all(d.fix and d.fix.safe for d in before)
    outcome = linter.fix_file(path)
    assert sorted(outcome.fixed) == sorted(d.code for d in before)
    assert linter.lint_file(path) == []
    once = path.read_bytes()
    assert linter.fix_file(path).fixed == ()
    assert path.read_bytes() == once


@pytest.mark.parametrize(
    "path", [p for p in corpus_files() if p.suffix == ".md"], ids=lambda p: p.relative_to(CORPUS).as_posix()
)
def test_fixing_every_corpus_file_leaves_only_unfixable_findings(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    linter = corpus_linter(path, root=tmp_path)
    linter.fix_file(copy, unsafe=True)
    remaining = linter.lint_file(copy)
    assert all(d.fix is None for d in remaining), [d.render() for d in remaining]
    once = copy.read_bytes()
    linter.fix_file(copy, unsafe=True)
    assert copy.read_bytes() == once


def test_unsafe_join_of_split_bullets_keeps_crlf(tmp_path: Path) -> None:
    path = _copy("logic/flag_spec_wrong_example_crlf_prompt.md", tmp_path)
    linter = corpus_linter(CORPUS / "logic/flag_spec_wrong_example_crlf_prompt.md", root=path.parent)
    assert linter.fix_file(path).fixed == ()  # LJ001's join is unsafe: --fix alone leaves it
    assert linter.fix_file(path, unsafe=True).fixed == ("LJ001",)
    text = path.read_bytes().decode()
    assert "\n" not in text.replace("\r\n", "")
    assert text.splitlines()[2] == (
        "- Field is blank/null in the output AND narrative does not contain this information "
        "AND output provides no acknowledgment of the gap."
    )
    assert positions(linter.lint_file(path)) == set()


def test_unsafe_join_keeps_example_lines(tmp_path: Path) -> None:
    path = _copy("logic/flag_with_example_lines_prompt.md", tmp_path)
    linter = corpus_linter(CORPUS / "logic/flag_with_example_lines_prompt.md", root=path.parent)
    linter.fix_file(path, unsafe=True)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[2].startswith("- The output omits the time a medication was given AND the narrative records")
    assert lines[3].strip().startswith("Example:") and lines[4].strip().startswith("- Example:")


def test_bom_survives_a_fix(tmp_path: Path) -> None:
    path = tmp_path / "bom_prompt.md"
    source = (CORPUS / "structure/flag_unnumbered_pass_conditions_prompt.md").read_bytes()
    path.write_bytes(b"\xef\xbb\xbf" + source)
    linter = corpus_linter(CORPUS / "structure/x", root=tmp_path)
    assert linter.fix_file(path).fixed == ("LJ015",)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf<!--")


def test_overlapping_fixes_apply_one_at_a_time() -> None:
    first = Fix("a", (Edit(2, 2, ("B",)),))
    clash = Fix("b", (Edit(2, 3, ("C",)),))
    insert = Fix("c", (Edit(2, 1, ("new",)),))
    text, applied = apply_fixes("a\nb\nc\n", [first, clash, insert])
    assert applied == [first, insert]
    assert text == "a\nnew\nB\nc\n"
