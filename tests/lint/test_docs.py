"""Rule metadata and docs/rules.md stay complete and in sync with the rule docstrings."""

from __future__ import annotations

import re

from pytest_llmjudge.lint.docs import render_rules_markdown
from pytest_llmjudge.lint.registry import all_rules
from tests.lint.conftest import REPO

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")


def test_docs_rules_md_is_generated_from_the_docstrings() -> None:
    current = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == render_rules_markdown(), "run: python tools/gen_rule_docs.py"


def test_every_rule_is_complete_and_unique() -> None:
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
    for rule in rules:
        assert re.fullmatch(r"LJ\d{3}", rule.code)
        assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*", rule.name)
        assert "\n" not in rule.summary
        doc = rule.doc()
        positions = [doc.find(section) for section in SECTIONS]
        assert all(p >= 0 for p in positions) and positions == sorted(positions), rule.code


def test_one_module_per_rule() -> None:
    folder = REPO / "pytest_llmjudge" / "lint" / "rules"
    modules = sorted(p.stem for p in folder.glob("lj*.py"))
    assert modules == sorted(f"{r.code.lower()}_{r.name.replace('-', '_')}" for r in all_rules())


def test_the_linter_does_not_import_pytest() -> None:
    paths = [
        *(REPO / "pytest_llmjudge" / "lint").rglob("*.py"),
        REPO / "pytest_llmjudge" / "suite" / "root.py",
    ]
    for path in sorted(paths):
        text = path.read_text(encoding="utf-8")
        imports_pytest = re.search(r"^\s*(?:import pytest|from pytest|from _pytest)", text, re.MULTILINE)
        assert not imports_pytest, path  # the pytest glue is glue/lint_items.py
        assert len(text.splitlines()) <= 400, path


def test_pre_commit_hook_runs_the_linter() -> None:
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "id: llmjudge-lint" in hooks and "entry: llmjudge lint" in hooks
