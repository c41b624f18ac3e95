"""pytest nodes: a benchmark file holds one benchmark node, whose items are its cases.

``benchmarks/…/A-NEG1.yaml::A-NEG1::prompt`` compiles and snapshot-checks the benchmark's
judge requests; ``benchmarks/…/A-NEG1.yaml::A-NEG1::<case-id>`` judges one case.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..compile.pairwise import PairwiseRequest
from ..compile.request import CompiledRequest, compile_case, compile_rubric
from ..compile.sections import sections_for
from ..compile.snapshot import judge_told, missing_in_ci, snapshot_diff
from ..judging.verdict import Outcome
from ..reporting.failures import CaseFailed, JudgeErrored, failure_report, failure_text
from ..suite import files as spec
from ..suite.errors import SpecError, display_path
from ..suite.prompt_file import PromptSections
from . import snapshots
from .case_capture import captured_wait, case_hooks
from .stash import RunHost, run_host

if TYPE_CHECKING:
    from ..judging.verdict import Outcome
    from ..pipeline.task_step import Produced
    from ..tasks.build import BuiltTask

PROMPT_ITEM = spec.PROMPT_ITEM


class BenchmarkFile(pytest.File):
    """One benchmark YAML file."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        state = _state(self.config)
        state.benchmark_file_collected(self.nodeid)
        display = display_path(self.path, self.config.rootpath)
        try:
            benchmark = spec.load_benchmark(
                self.path, display, self.config.rootpath, allow_outside=state.settings.allow_outside_root
            )
            state.benchmark_loaded(self.nodeid, benchmark)
            state.claim_code(benchmark)
            sections = sections_for(benchmark, self.config.rootpath)
            task = benchmark_task(benchmark, self.config.rootpath, state.settings)
        except SpecError as error:
            self.keep_snapshots()
            raise self.CollectError(error.render()) from None
        except Exception:
            self.keep_snapshots()
            raise
        yield BenchmarkNode.from_parent(
            self, name=benchmark.code, benchmark=benchmark, sections=sections, task=task
        )

    def keep_snapshots(self) -> None:
        """This file did not load: syrupy must not call its stored snapshot unused."""
        guard = snapshots.guard(self.config)
        if guard is not None:
            guard.keep_snapshots_of(self)


class BenchmarkNode(pytest.Collector):
    def __init__(
        self, *, benchmark: spec.Benchmark, sections: PromptSections, task: BuiltTask | None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.benchmark = benchmark
        self.sections = sections
        self.task = task

    def collect(self) -> Iterator[pytest.Item]:
        state = _state(self.config)
        style = state.prompt_style(self.benchmark)
        if self.benchmark.spec.parent_rubric and self.benchmark.parent_rubric_location is not None:
            parent = (self.benchmark.spec.parent_rubric, self.benchmark.parent_rubric_location)
            state.parent_rubrics[self.benchmark.code] = parent
        requests = {}
        for case in self.benchmark.cases:
            requests[case.id] = compile_case(self.benchmark, self.sections, awaiting(case, self.task), style)
        pairwise = state.pairwise_items(self, requests, style)  # judged against baseline outputs
        if pairwise is None:
            cases = [
                CaseItem.from_parent(self, name=c.id, case=c, request=requests[c.id])
                for c in self.benchmark.cases
            ]
            pairwise = (requests, cases)
        prompt_requests, cases = pairwise
        items: list[pytest.Item] = [PromptItem.from_parent(self, name=PROMPT_ITEM, requests=prompt_requests)]
        items += cases
        items += calibration_items(self, style, items)
        state.start_early(items)
        yield from items

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.benchmark.location.line - 1, self.benchmark.code


def calibration_items(node: BenchmarkNode, style: str, case_items: list[pytest.Item]) -> list[pytest.Item]:
    """The calibration items of ``node``'s benchmark (``calibration::<id>``); they and the labelled
    ``case_items`` get a keyword, so ``-k llmjudge_labelled`` selects every labelled case."""
    benchmark = node.benchmark
    items: list[pytest.Item] = []
    for case in benchmark.calibration_cases:
        request = compile_case(benchmark, node.sections, case, style)
        name = f"{CALIBRATION_PREFIX}{case.id}"
        items.append(CalibrationItem.from_parent(node, name=name, case=case, request=request))
    for item in [*case_items, *items]:
        if isinstance(item, CaseItem) and item.case.spec.label is not None:
            item.extra_keyword_matches.add(LABELLED_KEYWORD)
    return items


class SnapshotMismatch(Exception):
    """A benchmark's compiled judge requests differ from their accepted snapshot."""


def compiled_prompt() -> None:
    """The function a ``PromptItem`` stands for; its work is done in ``PromptItem.runtest``."""


class PromptItem(pytest.Function):
    """Compiles every case's judge request and compares them with the benchmark's snapshot.

    A ``pytest.Function`` because syrupy tracks only those when it decides which snapshots a
    run left unused: as a plain ``Item``, ``-k A-MED1`` reported (and ``--snapshot-update``
    deleted) the snapshots of every other benchmark in the folder. One snapshot per benchmark,
    named after this item (``A-MED1.prompt``), so that syrupy's reading of ``-k`` agrees with
    pytest's; per-case names made ``-k <case-id>`` report them unused.
    """

    checks_snapshot = True  # how the snapshot glue tells these items apart, without importing them

    def __init__(self, *, requests: dict[str, CompiledRequest | PairwiseRequest], **kwargs: Any) -> None:
        super().__init__(callobj=compiled_prompt, **kwargs)
        self.requests = requests
        benchmark: spec.Benchmark = self.parent.benchmark  # type: ignore[union-attr]
        self.benchmark = benchmark

    def runtest(self) -> None:
        self.check_snapshot(self.compiled_texts())
        if not self.benchmark.cases:
            # reported at the benchmark file, not at this line of the plugin
            reason = f"{self.benchmark.code} has no cases to judge (prompt compiled and checked)"
            raise pytest.skip.Exception(reason, _use_item_location=True)

    def compiled_texts(self) -> dict[str, str]:
        """What the judge is told for this benchmark's cases, without their data
        (``snapshot.judge_told``); the rubric when there are no cases."""
        from ..judging.pairwise_judge import render_pair
        from ..judging.rendering import render_messages

        texts = judge_told(
            {
                case_id: render_pair(r) if isinstance(r, PairwiseRequest) else render_messages(r)
                for case_id, r in self.requests.items()
            }
        )
        from ..tasks.build import task_requests

        texts.update(task_requests(self.benchmark, getattr(self.parent, "task", None)))
        if not texts:
            sections: PromptSections = self.parent.sections  # type: ignore[union-attr]
            style = _state(self.config).prompt_style(self.benchmark)
            texts = {"rubric": compile_rubric(sections, self.benchmark.code, style)}
        return texts

    def check_snapshot(self, texts: dict[str, str]) -> None:
        if not self.config.pluginmanager.hasplugin("syrupy"):
            return
        if self.benchmark.spec.evaluator_type in {"code", "manual_sme"}:
            return  # its requests are never sent: nothing to keep a snapshot of
        from syrupy.exceptions import SnapshotDoesNotExist, TaintedSnapshotError

        snapshot = self._request.getfixturevalue("snapshot")
        snapshots.record_new(snapshot, self.config)
        extension, location = snapshot.extension, snapshot.test_location
        where = display_path(
            Path(extension.get_location(test_location=location, index=0)), self.config.rootpath
        )
        code = self.benchmark.code
        if snapshot == texts:
            if snapshots.was_recorded(snapshot):
                self.user_properties.append((snapshots.RECORDED, f"{code} in {where}"))
            return
        try:
            accepted = extension.read_snapshot(
                test_location=location, index=0, session_id=str(id(snapshot.session))
            )
            lines = [f"compiled judge requests of {code} differ from the snapshot in {where}:"]
            lines += snapshot_diff(str(accepted), extension.serialize(texts))
        except SnapshotDoesNotExist:
            if snapshots.in_ci(self.config):
                raise SnapshotMismatch("\n".join(missing_in_ci(code, where))) from None
            lines = [f"no snapshot of the compiled judge requests of {code} in {where} yet"]
        except TaintedSnapshotError:
            lines = [f"the snapshot of {code} in {where} was written by another syrupy version"]
        lines.append("Accept the change with --snapshot-update once the new prompt is what you want.")
        raise SnapshotMismatch("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SnapshotMismatch):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

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
        self.task: BuiltTask | None = getattr(self.parent, "task", None)
        self.produced: Produced | None = None  # the output its task produced, once it has

    @property
    def ihook(self) -> Any:
        """pytest's hooks, its capture only around the wait for the verdict (``case_capture``)."""
        return case_hooks(self)

    def recompile(self, case: spec.Case) -> CompiledRequest:
        """The judge request of ``case`` (this case with the output its task produced)."""
        parent: BenchmarkNode = self.parent  # type: ignore[assignment]
        style = _state(self.config).prompt_style(self.benchmark)
        return compile_case(self.benchmark, parent.sections, case, style)

    def setup(self) -> None:
        if self.benchmark.spec.evaluator_type == "manual_sme":
            pytest.skip("manual_sme: reviewed by a subject-matter expert, not judged automatically")
        state = _state(self.config)
        with captured_wait(self):
            self.outcome = state.outcome(self)
        self.produced, request = state.produced(self.nodeid)
        if self.produced is not None and request is not None:  # reports show the produced output
            update = {"candidate_output": self.produced.output}
            self.case = replace(self.case, spec=self.case.spec.model_copy(update=update))
            self.request = request
        if self.outcome.failure is not None:
            raise JudgeErrored(self.outcome)

    def runtest(self) -> None:
        assert self.outcome is not None and self.outcome.verdict is not None
        if not self.outcome.verdict.effective_pass:
            raise CaseFailed(self.outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed | JudgeErrored):
            return failure_report(
                self.benchmark, self.case, self.request, excinfo.value.outcome, self.sections_excerpt()
            )
        return super().repr_failure(excinfo)

    def _repr_failure_py(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        # pytest formats a setup error (a judge ERROR) as a traceback, at 0.1-0.3 s each, before
        # the report shows this item's own text instead: give the text at once.
        if isinstance(excinfo.value, JudgeErrored):
            return self.repr_failure(excinfo)
        return super()._repr_failure_py(excinfo, style)

    def sections_excerpt(self) -> list[str]:
        sections: PromptSections = self.parent.sections  # type: ignore[union-attr]
        lines = [sections.automatic_fail_header] + [f"- {b.text}" for b in sections.automatic_fail]
        if sections.pass_conditions:
            lines.append("Pass conditions (all must be satisfied):")
            lines += [f"{i}. {b.text}" for i, b in enumerate(sections.pass_conditions, start=1)]
        return lines

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.location.line - 1, f"{self.benchmark.code}::{self.case.id}"


def _state(config: pytest.Config) -> RunHost:
    return run_host(config)


def benchmark_task(benchmark: spec.Benchmark, rootdir: Path, settings: Any) -> BuiltTask | None:
    """The benchmark's task (its own, else the run's ``--llmjudge-task``), built at collection so a
    broken one is an error at its line; a benchmark whose cases lack outputs needs one."""
    from ..tasks.build import TaskOptions, build_task

    options = TaskOptions(
        settings.task, settings.task_model, settings.task_base_url, settings.allow_outside_root
    )
    missing = [c for c in benchmark.cases if c.spec.candidate_output is None]
    if benchmark.spec.task is None and settings.task is None and not missing:
        return None  # every output is stored, and no task asked for: nothing heavy to import
    from ..models.models import judge_label

    built = build_task(benchmark, rootdir, options, judge_label)
    if built is None and missing:
        more = f" ({len(missing) - 1} more case(s) have none either)" if len(missing) > 1 else ""
        raise SpecError(
            missing[0].location,  # the case's own line, as before the task step
            "task",
            f"case {missing[0].id} has no candidate_output and {benchmark.code} has no task "
            f"to produce it{more}",
            "add 'task:' (a Python callable or a model with a prompt file), pass --llmjudge-task, "
            "or give each case a candidate_output",
        )
    return built


def awaiting(case: spec.Case, task: BuiltTask | None) -> spec.Case:
    """``case`` as compiled at collection: a case whose output its task will produce shows where
    the output goes (the snapshot keeps the judge prompt, not an output that does not exist yet)."""
    if task is None or case.spec.candidate_output is not None:
        return case
    placeholder = f"<produced by task {task.task.label}>"
    return replace(case, spec=case.spec.model_copy(update={"candidate_output": placeholder}))


CALIBRATION_PREFIX = "calibration::"
LABELLED_KEYWORD = "llmjudge_labelled"  # ``-k llmjudge_labelled`` selects every labelled case


class JudgeDisagrees(Exception):
    """The judge's verdict on a calibration case differs from the human label."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome)
        self.outcome = outcome


class CalibrationItem(CaseItem):
    """One calibration case: the judge's verdict against the human label."""

    def runtest(self) -> None:
        assert self.outcome is not None and self.outcome.verdict is not None
        if self.outcome.verdict.effective_pass != (self.case.spec.label == "pass"):
            raise JudgeDisagrees(self.outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, JudgeDisagrees):
            outcome = excinfo.value.outcome
            judge = "pass" if outcome.verdict and outcome.verdict.effective_pass else "fail"
            head = f"calibration: human label {self.case.spec.label}, judge {judge}"
            text = failure_text(self.benchmark, self.case, self.request, outcome, self.sections_excerpt())
            return f"{head}\n{text}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> Any:
        path, line, _ = super().reportinfo()
        return path, line, f"{self.benchmark.code}::{CALIBRATION_PREFIX}{self.case.id}"
