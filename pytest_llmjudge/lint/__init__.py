"""The rubric-prompt linter: one rule per module in ``rules/``, run by ``engine.Linter``.

Entry points: ``llmjudge lint`` / ``llmjudge rules`` (``cli``), ``pytest --llmjudge-lint``
(``pytest_items``), ``tools/flag_compound_logic.py`` (LJ001 alone).
"""

from __future__ import annotations

from .diagnostics import Diagnostic, Edit, Fix, Severity
from .engine import FileFixes, Linter
from .settings import LintSettings, SettingsError, load_settings

__all__ = [
    "Diagnostic",
    "Edit",
    "FileFixes",
    "Fix",
    "LintSettings",
    "Linter",
    "SettingsError",
    "Severity",
    "load_settings",
]
