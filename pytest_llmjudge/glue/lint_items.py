"""pytest glue for ``pytest --llmjudge-lint``: one lint item per prompt, benchmark or template file.

Files under the collected paths get their item from ``pytest_collect_file``; the prompt files the
collected benchmarks use get theirs after collection, wherever they live (``evaluators/`` is
rarely among the paths given to pytest), once per file however many benchmarks share it.
The engine is imported inside the hooks, so sessions that lint nothing never load pydantic or
jinja2. A failing item shows the findings as ``path:line:col: CODE message`` lines, no traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..lint.diagnostics import Diagnostic
    from ..lint.engine import Linter

LINTER = pytest.StashKey["Linter"]()
LINT_ENV = "LLMJUDGE_LINT"
_LINTED_SUFFIXES = (".yaml", ".yml")


class LintFailure(Exception):
    """Error-severity findings in one file."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__(f"{len(diagnostics)} lint findings")


def lint_requested(config: pytest.Config) -> bool:
    """``--llmjudge-lint`` / ``--no-llmjudge-lint``, else ``LLMJUDGE_LINT``, else ini ``llmjudge_lint``."""
    given: bool | None = config.getoption("llmjudge_lint", None)
    if given is not None:
        return given
    env = os.environ.get(LINT_ENV, "")
    if env.strip():
        from ..suite.root import RootError, read_bool  # only then: this runs in every pytest run

        try:
            return read_bool(env, LINT_ENV)
        except RootError as exc:
            raise pytest.UsageError(str(exc)) from None
    return bool(config.getini("llmjudge_lint"))


def _ini(config: pytest.Config, name: str) -> object:
    """An ini value, or None when the option is not registered (the plugin itself disabled)."""
    try:
        return config.getini(name)
    except ValueError:
        return None


def _linter(config: pytest.Config) -> Linter:
    linter = config.stash.get(LINTER, None)
    if linter is None:
        from ..lint.engine import Linter
        from ..lint.settings import settings_for_root
        from ..suite.root import root_from_values
        from .stash import STATE

        root = root_from_values(config.rootpath, config.inipath, lambda name: _ini(config, name))
        try:
            state = config.stash.get(STATE, None)  # the run's settings, when the run state exists
            allow = bool(state is not None and state.settings.allow_outside_root)
            linter = Linter(settings_for_root(root, allow_outside_root=allow), base=config.rootpath)
        except ValueError as exc:  # SettingsError, SelectionError: a mistake in [tool.llmjudge.lint]
            raise pytest.UsageError(f"--llmjudge-lint: {exc}") from None
        config.stash[LINTER] = linter
    return linter


def collect_lint_file(file_path: Path, parent: pytest.Collector) -> LintFile | None:
    """A ``LintFile`` for a prompt (``*_prompt.md``), benchmark or template file, else None."""
    if not (file_path.name.endswith("_prompt.md") or file_path.suffix in _LINTED_SUFFIXES):
        return None
    linter = _linter(parent.config)
    if linter.excluded(file_path):
        return None
    if file_path.suffix in _LINTED_SUFFIXES and (
        linter.is_rubric(file_path)
        or not (_is_lintable_yaml(file_path) or linter.is_task_template(file_path))
    ):
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


def prompt_items(session: pytest.Session, items: list[pytest.Item]) -> list[LintItem]:
    """Lint items for the prompt files the collected benchmarks use and no lint item covers yet."""
    if not any(item.path.suffix in _LINTED_SUFFIXES for item in items):
        return []  # no benchmark was collected: spare the import of the judging nodes
    from ..lint.documents import task_prompt_file
    from .nodes import BenchmarkNode

    linted = {item.path.resolve() for item in items if isinstance(item, LintItem)}
    prompts: dict[Path, None] = {}
    for item in items:
        node = item.parent
        if isinstance(node, BenchmarkNode):
            # the judge's prompt file, and the prompt template its model task renders
            task_prompt = task_prompt_file(node.benchmark, session.config.rootpath)
            for path in (node.benchmark.prompt_path, task_prompt):
                if path is not None:
                    prompts[path.resolve()] = None
    linter = _linter(session.config)
    found: list[LintItem] = []
    for path in prompts:
        if path in linted or not path.is_file() or linter.excluded(path):
            continue
        found.extend(LintFile.from_parent(session, path=path).collect())
    return found


class LintPlugin:
    """Registered in ``pytest_configure`` when linting is requested (see ``lint_requested``)."""

    @pytest.hookimpl
    def pytest_configure(self, config: pytest.Config) -> None:
        _linter(config)  # settings mistakes stop the run here, as a usage error

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> LintFile | None:
        return collect_lint_file(file_path, parent)

    @pytest.hookimpl(tryfirst=True)  # before -k, -m and --deselect, which then apply to them too
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        items.extend(prompt_items(session, items))


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
