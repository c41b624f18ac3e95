"""pytest nodes: a benchmark file holds one benchmark node, whose items are its cases.

``benchmarks/…/A-NEG1.yaml::A-NEG1::prompt`` compiles and snapshot-checks the benchmark's
judge requests; ``benchmarks/…/A-NEG1.yaml::A-NEG1::<case-id>`` judges one case.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import spec
from .compile import CompiledRequest, compile_case, sections_from_fields
from .errors import Location, SpecError
from .prompt_file import PromptSections, parse_prompt
from .report import CaseFailed, JudgeErrored, failure_text
from .verdict import Outcome

if TYPE_CHECKING:
    from .session import RunState

PROMPT_ITEM = "prompt"


def load_sections(benchmark: spec.Benchmark, display_root: Path) -> PromptSections:
    if benchmark.prompt_path is None:
        return sections_from_fields(benchmark)
    raw = benchmark.prompt_path.read_bytes()
    display = _relative(benchmark.prompt_path, display_root)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SpecError(Location(display, 1, 1), "", "prompt file is not valid UTF-8", "save it as UTF-8") from None
    return parse_prompt(text, display)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


class BenchmarkFile(pytest.File):
    """One benchmark YAML file."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        state = _state(self.config)
        display = _relative(self.path, self.config.rootpath)
        try:
            benchmark = spec.load_benchmark(self.path, display, self.config.rootpath)
            state.register(benchmark)
            sections = load_sections(benchmark, self.config.rootpath)
        except SpecError as error:
            raise self.CollectError(error.render()) from None
        yield BenchmarkNode.from_parent(self, name=benchmark.code, benchmark=benchmark, sections=sections)


class BenchmarkNode(pytest.Collector):
    def __init__(self, *, benchmark: spec.Benchmark, sections: PromptSections, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.benchmark = benchmark
        self.sections = sections

    def collect(self) -> Iterator[pytest.Item]:
        state = _state(self.config)
        style = state.prompt_style(self.benchmark)
        requests = {}
        for case in self.benchmark.cases:
            if case.id == PROMPT_ITEM:
                error = SpecError(case.location, "id", f"case id '{PROMPT_ITEM}' is reserved", "rename the case")
                raise self.CollectError(error.render())
            requests[case.id] = compile_case(self.benchmark, self.sections, case, style)
        yield PromptItem.from_parent(self, name=PROMPT_ITEM, requests=requests)
        for case in self.benchmark.cases:
            yield CaseItem.from_parent(self, name=case.id, case=case, request=requests[case.id])

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.benchmark.location.line - 1, self.benchmark.code


class PromptItem(pytest.Item):
    """Compiles every case's judge request and compares it with its syrupy snapshot."""

    def __init__(self, *, requests: dict[str, CompiledRequest], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.requests = requests
        benchmark: spec.Benchmark = self.parent.benchmark  # type: ignore[union-attr]
        self.benchmark = benchmark

    @property
    def obj(self) -> Any:
        """What syrupy reads to name snapshots of this item."""
        return self.runtest

    def runtest(self) -> None:
        _state(self.config).check_snapshots(self)
        if not self.benchmark.cases:
            pytest.skip(f"{self.benchmark.code} has no cases to judge (prompt compiled and checked)")

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.benchmark.location.line - 1, f"{self.benchmark.code}::{PROMPT_ITEM}"


class CaseItem(pytest.Item):
    """One case: waits for its verdict in setup (so judge failures are ERRORs), asserts it in call."""

    def __init__(self, *, case: spec.Case, request: CompiledRequest, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.request = request
        benchmark: spec.Benchmark = self.parent.benchmark  # type: ignore[union-attr]
        self.benchmark = benchmark
        self.outcome: Outcome | None = None

    def setup(self) -> None:
        if self.benchmark.spec.evaluator_type == "manual_sme":
            pytest.skip("manual_sme: reviewed by a subject-matter expert, not judged automatically")
        self.outcome = _state(self.config).outcome(self)
        if self.outcome.failure is not None:
            raise JudgeErrored(self.outcome)

    def runtest(self) -> None:
        assert self.outcome is not None and self.outcome.verdict is not None
        if not self.outcome.verdict.effective_pass:
            raise CaseFailed(self.outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed | JudgeErrored):
            return failure_text(self.benchmark, self.case, self.request, excinfo.value.outcome, self.sections_excerpt())
        return super().repr_failure(excinfo)

    def sections_excerpt(self) -> list[str]:
        sections: PromptSections = self.parent.sections  # type: ignore[union-attr]
        lines = [sections.automatic_fail_header] + [f"- {b.text}" for b in sections.automatic_fail]
        if sections.pass_conditions:
            lines.append("Pass conditions (all must be satisfied):")
            lines += [f"{i}. {b.text}" for i, b in enumerate(sections.pass_conditions, start=1)]
        return lines

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.location.line - 1, f"{self.benchmark.code}::{self.case.id}"


def _state(config: pytest.Config) -> RunState:
    from .session import STATE

    return config.stash[STATE]
