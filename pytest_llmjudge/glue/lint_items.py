"""pytest glue for ``pytest --llmjudge-lint``: one lint item per prompt, benchmark or template file.

The engine is imported inside the hooks, so sessions that lint nothing never load pydantic or
jinja2. A failing item shows the findings as ``path:line:col: CODE message`` lines, no traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..lint.diagnostics import Diagnostic
    from ..lint.engine import Linter

LINTER = pytest.StashKey["Linter"]()
_LINTED_SUFFIXES = (".yaml", ".yml")


class LintFailure(Exception):
    """Error-severity findings in one file."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__(f"{len(diagnostics)} lint findings")


def _linter(config: pytest.Config) -> Linter:
    linter = config.stash.get(LINTER, None)
    if linter is None:
        from ..lint.engine import Linter
        from ..lint.settings import load_settings

        try:
            linter = Linter(load_settings(config.rootpath), base=config.rootpath)
        except ValueError as exc:  # SettingsError, SelectionError: a mistake in [tool.llmjudge.lint]
            raise pytest.UsageError(f"--llmjudge-lint: {exc}") from None
        config.stash[LINTER] = linter
    return linter


def collect_lint_file(file_path: Path, parent: pytest.Collector) -> LintFile | None:
    """A ``LintFile`` for a prompt (``*_prompt.md``), benchmark or template file, else None."""
    if not (file_path.name.endswith("_prompt.md") or file_path.suffix in _LINTED_SUFFIXES):
        return None
    if _linter(parent.config).excluded(file_path):
        return None
    if file_path.suffix in _LINTED_SUFFIXES and not _is_lintable_yaml(file_path):
        return None
    lint_file: LintFile = LintFile.from_parent(parent, path=file_path)
    return lint_file


def _is_lintable_yaml(path: Path) -> bool:
    """A benchmark or template file; rubrics, notes and other YAML get no lint item."""
    from ..lint.documents import yaml_kind
    from ..suite.errors import SpecError
    from ..suite.files import read_yaml

    try:
        return yaml_kind(read_yaml(path, path.name).data) is not None
    except SpecError:
        return True  # a broken YAML file gets a lint item that reports LJ000


class LintPlugin:
    """Register in ``pytest_configure`` when ``--llmjudge-lint`` is given."""

    @pytest.hookimpl
    def pytest_configure(self, config: pytest.Config) -> None:
        _linter(config)  # settings mistakes stop the run here, as a usage error

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> LintFile | None:
        return collect_lint_file(file_path, parent)


class LintFile(pytest.File):
    def collect(self) -> Iterator[LintItem]:
        yield LintItem.from_parent(self, name="llmjudge-lint")


class LintItem(pytest.Item):
    """Fails when the file has an error-severity finding; warnings are shown, not failed on."""

    def runtest(self) -> None:
        from ..lint.diagnostics import Severity
        from ..lint.formats import severity_of

        found = _linter(self.config).lint_file(self.path)
        if any(severity_of(d) is Severity.ERROR for d in found):
            raise LintFailure(found)
        for diagnostic in found:
            self.add_report_section("call", "llmjudge-lint", diagnostic.render())

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, LintFailure):
            from ..lint.formats import render_text

            return render_text(excinfo.value.diagnostics).rstrip()
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"llmjudge-lint {self.path.name}"
