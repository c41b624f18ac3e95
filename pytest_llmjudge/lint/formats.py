"""Rendering findings: ``path:line:col: CODE message`` text, JSON, SARIF 2.1.0 and statistics."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .. import __version__
from .diagnostics import Diagnostic, Severity
from .registry import all_rules, get_rule

FORMATS = ("text", "json", "sarif")
_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def severity_of(diagnostic: Diagnostic) -> Severity:
    return get_rule(diagnostic.code).severity


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    """One line: how many findings of each severity, how many ``--fix`` would fix."""
    if not diagnostics:
        return "No findings."
    errors = sum(severity_of(d) is Severity.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    safe = sum(bool(d.fix and d.fix.safe) for d in diagnostics)
    unsafe = sum(bool(d.fix and not d.fix.safe) for d in diagnostics)
    counts = f"{_count(errors, 'error')}, {_count(warnings, 'warning')}"
    line = f"Found {_count(len(diagnostics), 'finding')} ({counts})."
    if safe:
        line += f" {safe} fixable with --fix."
    if unsafe:
        line += f" {unsafe} more with --fix --unsafe-fixes."
    return line


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def render_text(diagnostics: Sequence[Diagnostic]) -> str:
    lines = [d.render() for d in diagnostics]
    return "\n".join([*lines, *([""] if lines else []), summary(diagnostics)]) + "\n"


def as_dict(diagnostic: Diagnostic) -> dict[str, Any]:
    rule = get_rule(diagnostic.code)
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "message": diagnostic.message,
        "path": diagnostic.path,
        "line": diagnostic.line,
        "col": diagnostic.col,
        "fix": None
        if fix is None
        else {
            "description": fix.description,
            "safe": fix.safe,
            "edits": [{"start": e.start, "end": e.end, "lines": list(e.lines)} for e in fix.edits],
        },
    }


def render_json(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([as_dict(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"


def render_sarif(diagnostics: Sequence[Diagnostic]) -> str:
    rules = all_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    driver = {
        "name": "llmjudge-lint",
        "version": __version__,
        "informationUri": "https://pypi.org/project/pytest-llmjudge/",
        "rules": [
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.doc()},
                "help": {"text": rule.doc(), "markdown": rule.doc()},
                "defaultConfiguration": {"level": rule.severity.value},
            }
            for rule in rules
        ],
    }
    results = [
        {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": severity_of(d).value,
            "message": {"text": d.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": d.path},
                        "region": {"startLine": d.line, "startColumn": d.col},
                    }
                }
            ],
        }
        for d in diagnostics
    ]
    log = {
        "$schema": _SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def render(diagnostics: Sequence[Diagnostic], fmt: str) -> str:
    if fmt == "json":
        return render_json(diagnostics)
    if fmt == "sarif":
        return render_sarif(diagnostics)
    return render_text(diagnostics)


def render_statistics(diagnostics: Sequence[Diagnostic]) -> str:
    """Per rule: findings, files with a finding, severity and whether a fix exists."""
    findings = Counter(d.code for d in diagnostics)
    files = Counter(code for code, _ in {(d.code, d.path) for d in diagnostics})
    rows = [f"{'findings':>8}  {'files':>5}  code   {'name':<28}  severity  fix"]
    for code in sorted(findings):
        rule = get_rule(code)
        fixable = "[*]" if any(d.fix for d in diagnostics if d.code == code) else ""
        severity = rule.severity.value
        rows.append(
            f"{findings[code]:>8}  {files[code]:>5}  {code}  {rule.name:<28}  {severity:<8}  {fixable}"
        )
    return "\n".join([*rows, "", summary(diagnostics)]) + "\n"
