"""The lint run: find files, load them, run the selected rules, drop suppressed findings, fix.

A ``Linter`` holds one run's settings and the repository's benchmarks (loaded once, for the
rules that span files). Files are linted independently, so the CLI and the pytest items share
this engine and report the same findings.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..suite.errors import SpecError
from ..suite.files import read_yaml
from ..suite.prompt_file import split_lines
from ..suite.reading import read_regular_file
from ..suite.yamlsrc import decode
from .diagnostics import Diagnostic, Fix
from .documents import (
    BenchmarkDocument,
    Document,
    Kind,
    PromptDocument,
    load_prompt,
    load_yaml_document,
    task_prompt_file,
    yaml_kind,
)
from .fixes import apply_fixes
from .noqa import parse_suppressions
from .registry import all_rules, expand, selected
from .rule import Project
from .settings import LintSettings

_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "build", "dist", "site-packages"})
_YAML = (".yaml", ".yml")
MAX_FIX_PASSES = 10


@dataclass(frozen=True)
class FileFixes:
    """What ``--fix`` did to one file."""

    display: str
    fixed: tuple[str, ...]  # codes of the findings it fixed, in order


class Linter:
    def __init__(
        self,
        settings: LintSettings,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] = (),
        base: Path | None = None,
    ) -> None:
        self.settings = settings
        self.codes = selected(select if select is not None else settings.select, (*settings.ignore, *ignore))
        self.base = (base or Path.cwd()).resolve()
        self._named_templates: set[Path] = set()  # task templates of the benchmarks discovered

    # -- files -----------------------------------------------------------------------------

    def display(self, path: Path) -> str:
        resolved = path.resolve()
        try:
            return resolved.relative_to(self.base).as_posix()
        except ValueError:
            return resolved.as_posix()

    def _relative(self, path: Path) -> str:
        resolved = path.resolve()
        try:
            return resolved.relative_to(self.settings.root).as_posix()
        except ValueError:
            return resolved.as_posix()

    def excluded(self, path: Path) -> bool:
        rel = self._relative(path)
        return any(
            fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(rel, g.rstrip("/") + "/*")
            for g in self.settings.exclude
        )

    def is_rubric(self, path: Path) -> bool:
        """A file below the rubric folder (ini ``llmjudge_rubrics``): a rubric, never a benchmark."""
        folder = (self.settings.root / self.settings.rubrics).resolve()
        return path.resolve().is_relative_to(folder)

    def discover(self, paths: Iterable[Path], force_exclude: bool = False) -> list[Path]:
        """Files to lint under ``paths``: ``*_prompt.md``, and YAML that is a benchmark or template,
        with the prompt-template file of each benchmark's model task wherever it lives.

        Exclusions prune folder walks; a path named explicitly is linted unless ``force_exclude``.
        """
        found = self._walk(paths, force_exclude)
        seen = {path.resolve() for path in found}
        for path in list(found):
            template = self._task_template_of(path)
            if template is not None and template.resolve() not in seen and not self.excluded(template):
                seen.add(template.resolve())
                found.append(template)
        return found

    def _task_template_of(self, path: Path) -> Path | None:
        """The ``task: {prompt_file: ...}`` a benchmark file names, when it is a file to lint."""
        if path.suffix not in _YAML or self.is_rubric(path):
            return None
        try:
            data = read_yaml(path, self.display(path)).data
        except SpecError:
            return None  # linting the file reports it
        task = data.get("task") if yaml_kind(data) is Kind.BENCHMARK else None
        prompt_file = task.get("prompt_file") if isinstance(task, dict) else None
        if not isinstance(prompt_file, str):
            return None
        template = self.settings.root / prompt_file
        inside = template.resolve().is_relative_to(self.settings.root.resolve())
        if not template.is_file() or not (inside or self.settings.allow_outside_root):
            return None  # the benchmark's own load reports it
        self._named_templates.add(template.resolve())
        return template

    def _walk(self, paths: Iterable[Path], force_exclude: bool) -> list[Path]:
        found: dict[Path, None] = {}
        for path in paths:
            if force_exclude and self.excluded(path):
                continue
            if path.is_file():
                found[path] = None
                continue
            prune = not self.excluded(path)
            for folder, dirs, files in os.walk(path):
                here = Path(folder)
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if not d.startswith(".")
                    and d not in _SKIP_DIRS
                    and not (prune and self.excluded(here / d))
                )
                for name in sorted(files):
                    candidate = here / name
                    if (name.endswith("_prompt.md") or name.endswith(_YAML)) and not (
                        prune and self.excluded(candidate)
                    ):
                        found[candidate] = None
        return list(found)

    def is_task_template(self, path: Path) -> bool:
        """Whether a benchmark's model task renders ``path`` (``task: {prompt_file: ...}``)."""
        resolved = path.resolve()
        return resolved in self._named_templates or resolved in self.task_templates

    # -- project ---------------------------------------------------------------------------

    @cached_property
    def project_benchmarks(self) -> tuple[BenchmarkDocument, ...]:
        """Every benchmark under the configured benchmark folders that loads."""
        docs = []
        folders = [self.settings.root / b for b in self.settings.benchmarks]
        for path in self._walk([f for f in folders if f.is_dir()], force_exclude=False):
            if path.suffix in _YAML:
                try:
                    doc = self._load(path, task_template=False)
                except SpecError:
                    continue
                if isinstance(doc, BenchmarkDocument):
                    docs.append(doc)
        return tuple(docs)

    @cached_property
    def task_templates(self) -> frozenset[Path]:
        """The prompt-template files the project's model tasks render, resolved."""
        named = (task_prompt_file(doc.benchmark, self.settings.root) for doc in self.project_benchmarks)
        return frozenset(path.resolve() for path in named if path is not None)

    def _project(self, document: Document | None) -> Project:
        benchmarks = list(self.project_benchmarks)
        known = {b.path.resolve() for b in benchmarks}
        if isinstance(document, BenchmarkDocument) and document.path.resolve() not in known:
            benchmarks.append(document)
        prompts = (document,) if isinstance(document, PromptDocument) else ()
        return Project(self.settings.root, tuple(benchmarks), prompts)

    # -- linting ---------------------------------------------------------------------------

    def load(self, path: Path) -> Document | None:
        """The document at ``path``; None for YAML that is neither a benchmark nor a template."""
        return self._load(path, task_template=path.suffix in _YAML and self.is_task_template(path))

    def _load(self, path: Path, task_template: bool) -> Document | None:
        display = self.display(path)
        if path.suffix in _YAML:
            if self.is_rubric(path):
                return None
            root, allow = self.settings.root, self.settings.allow_outside_root
            return load_yaml_document(path, display, root, allow, task_template=task_template)
        return load_prompt(path, display)

    def lint_file(self, path: Path) -> list[Diagnostic]:
        """Findings in one file, suppressions and per-file ignores applied, sorted by position."""
        display = self.display(path)
        codes = self.codes - self._per_file_ignores(path)
        try:
            document = self.load(path)
        except SpecError as exc:
            if "LJ000" not in codes:
                return []
            where = exc.location
            message = f"{exc.field + ': ' if exc.field else ''}{exc.message}"
            return [Diagnostic("LJ000", message, display, max(where.line, 1), max(where.col, 1))]
        if document is None:
            return []
        found = [d for d in self._run_rules(document) if d.code in codes]
        hidden = parse_suppressions(split_lines(document.text))
        return sorted((d for d in found if not hidden.hides(d)), key=lambda d: d.sort_key)

    def _run_rules(self, document: Document) -> Iterator[Diagnostic]:
        for rule in all_rules():
            if rule.code in self.codes:
                yield from rule.findings(document, lambda: self._project(document))

    def _per_file_ignores(self, path: Path) -> frozenset[str]:
        rel = self._relative(path)
        ignored: set[str] = set()
        for glob, codes in self.settings.per_file_ignores:
            if fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel, glob.rstrip("/") + "/*"):
                ignored.update(expand(codes, opt_in=True))
        return frozenset(ignored)

    def lint(self, paths: Iterable[Path], force_exclude: bool = False) -> list[Diagnostic]:
        return [d for path in self.discover(paths, force_exclude) for d in self.lint_file(path)]

    # -- fixing ----------------------------------------------------------------------------

    def fix_file(self, path: Path, unsafe: bool = False) -> FileFixes:
        """Apply fixes to ``path`` until none applies (at most ``MAX_FIX_PASSES`` passes)."""
        fixed: list[str] = []
        for _ in range(MAX_FIX_PASSES):
            diagnostics = self.lint_file(path)
            fixes: dict[int, tuple[str, Fix]] = {}
            for d in diagnostics:
                if d.fix is not None and (d.fix.safe or unsafe):
                    fixes[id(d.fix)] = (d.code, d.fix)
            if not fixes:
                break
            raw = read_regular_file(path, self.display(path))  # read only once there is a fix to make
            bom = raw.startswith(b"\xef\xbb\xbf")
            text = decode(raw, self.display(path))
            new_text, applied = apply_fixes(text, [fix for _, fix in fixes.values()])
            if new_text == text:
                break
            fixed.extend(code for code, fix in fixes.values() if any(fix is a for a in applied))
            path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8"))
        return FileFixes(self.display(path), tuple(fixed))
