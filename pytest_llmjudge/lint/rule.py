"""What a rule is: a code, a kebab-case name, a severity, a one-line summary and a ``check``.

Rules come in four shapes, one per thing they look at. The engine calls each rule only with the
documents of its kind, so a rule is a plain class with no knowledge of files, settings or output.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from .diagnostics import Diagnostic, Fix, Severity
from .documents import BenchmarkDocument, Document, Kind, PromptDocument, TemplateDocument


@dataclass(frozen=True)
class Project:
    """Everything rules that span files need: every benchmark of the repository, the linted prompts."""

    root: Path
    benchmarks: tuple[BenchmarkDocument, ...]
    prompts: tuple[PromptDocument, ...]


class Rule(ABC):
    """Base of every rule; subclasses set the class attributes and write the docstring."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    kinds: ClassVar[frozenset[Kind]] = frozenset()
    fixable: ClassVar[bool] = False
    opt_in: ClassVar[bool] = False  # runs only when selected by its exact code or name

    @classmethod
    def doc(cls) -> str:
        """The rule's docstring, dedented: *What it does / Why is this bad? / Example / Use instead*."""
        return inspect.cleandoc(cls.__doc__ or "")

    def diagnostic(self, path: str, line: int, col: int, message: str, fix: Fix | None = None) -> Diagnostic:
        return Diagnostic(self.code, message, path, max(line, 1), max(col, 1), fix)

    def findings(self, document: Document, project: Callable[[], Project]) -> Iterable[Diagnostic]:
        """This rule's findings in ``document``; nothing when the document is not of its kind."""
        return ()


class PromptRule(Rule):
    kinds = frozenset({Kind.PROMPT})

    @abstractmethod
    def check(self, prompt: PromptDocument) -> Iterable[Diagnostic]: ...

    def findings(self, document: Document, project: Callable[[], Project]) -> Iterable[Diagnostic]:
        return self.check(document) if isinstance(document, PromptDocument) else ()


class BenchmarkRule(Rule):
    kinds = frozenset({Kind.BENCHMARK})

    @abstractmethod
    def check(self, benchmark: BenchmarkDocument) -> Iterable[Diagnostic]: ...

    def findings(self, document: Document, project: Callable[[], Project]) -> Iterable[Diagnostic]:
        return self.check(document) if isinstance(document, BenchmarkDocument) else ()


class TemplateRule(Rule):
    kinds = frozenset({Kind.TEMPLATE})

    @abstractmethod
    def check(self, template: TemplateDocument) -> Iterable[Diagnostic]: ...

    def findings(self, document: Document, project: Callable[[], Project]) -> Iterable[Diagnostic]:
        return self.check(document) if isinstance(document, TemplateDocument) else ()


class ProjectRule(Rule):
    """A rule over several files; the engine keeps only findings in the files being linted."""

    kinds = frozenset({Kind.PROMPT, Kind.BENCHMARK})

    @abstractmethod
    def check(self, project: Project) -> Iterable[Diagnostic]: ...

    def findings(self, document: Document, project: Callable[[], Project]) -> Iterable[Diagnostic]:
        if not isinstance(document, PromptDocument | BenchmarkDocument):
            return ()
        return [d for d in self.check(project()) if d.path == document.display]


class FileRule(Rule):
    """A finding the engine itself makes (a file it cannot load); there is nothing to check."""

    kinds = frozenset(Kind)
