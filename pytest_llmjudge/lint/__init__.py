"""The rubric-prompt linter: one rule per module in ``rules/``, run by ``engine.Linter``.

Entry points: ``llmjudge lint`` / ``llmjudge rules`` (``cli``), ``pytest --llmjudge-lint``
(``glue/lint_items``), ``tools/flag_compound_logic.py`` (LJ001 alone). Both runs root
themselves where pytest does (``suite.root``) and share ``settings.settings_for_root``.
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
