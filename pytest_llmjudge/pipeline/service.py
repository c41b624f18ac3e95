"""The judging service of one run: judge configurations, local servers, verdict cache, scheduler
and outcomes. Knows nothing of pytest: the glue hands it cases and asks for their outcomes.

A case is anything with a ``nodeid``, a ``benchmark``, a ``case`` and a compiled ``request``.
Deterministic outcomes (checks, cache hits, replay misses) are settled when a case is scheduled;
the rest are judged in the background, each waited for only when its item runs.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cost.spending import Spending
from ..execution.samples import SAMPLE_SEPARATOR, sample_key
from ..judging.verdict import JudgeFailure, Outcome
from ..models.judges import Judges, JudgeSetupError
from ..suite.settings import RunSettings
from .host import CaseToJudge, JudgedCase, ProducedCase
from .pairwise_pipeline import PairwisePipeline
from .panel import CombinePanel, PanelPipeline, task_first
from .settle import Ask, checks_decide, sample_count, send, settle_or_judge
from .task_pipeline import TaskPipeline

if TYPE_CHECKING:
    from ..cost.pricing import Price
    from ..execution.cache import VerdictCache
    from ..execution.scheduler import Job, Scheduler, Waiting
    from ..models.answered import Answered
    from ..models.config import JudgeConfig
    from ..models.judge_process import JudgeProcesses
    from ..suite.files import Benchmark

CACHE_BATCH, CACHE_BATCH_SECONDS = 64, 0.5  # verdicts per cache transaction, at most this late
NO_MODEL_MESSAGE = (
    "{count} case(s) need a judge model and none is configured; nothing was sent to any model.\n"
    "Set one (highest precedence first):\n"
    "  judge: {{model: ...}}            in a benchmark file\n"
    "  --llmjudge-model MODEL          on the command line (e.g. openai:gpt-4o,\n"
    "                                  anthropic:claude-sonnet-4-5, ollama:llama3.2,\n"
    "                                  or 'local' for the bundled offline model)\n"
    "  LLMJUDGE_MODEL=MODEL            in the environment\n"
    "  llmjudge_model = MODEL          in the [pytest] ini options\n"
    "  def pytest_llmjudge_model(config): ...   a hook in conftest.py returning a pydantic-ai Model\n"
    "Add --llmjudge-base-url URL for an OpenAI-compatible server (vLLM, Ollama, llama.cpp)."
)


@dataclass(eq=False)
class JudgingService:
    settings: RunSettings
    root: Path
    default_model: Callable[[], Any]  # the pytest_llmjudge_model hook: a model object or None
    waiting: Callable[[], Waiting | None] = lambda: None  # the status line, made on first need
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    cache_write_errors: list[str] = field(default_factory=list)
    cache_hits: int = 0
    scheduler: Scheduler[Outcome] | None = None
    resolved: dict[str, Answered] = field(default_factory=dict)  # see ``pipeline.rejudge``
    # a case's samples (judged ``judge.repeats`` times) into its one outcome; None keeps sample 0
    combine: Callable[[Benchmark, list[Outcome]], Outcome] | None = None
    combine_panel: CombinePanel | None = None  # a panel case's members' samples into its outcome
    setup_errors_per_case: bool = False  # see ``schedule``
    _repeats: dict[str, int] = field(default_factory=dict)
    _cache: VerdictCache | None = None
    judges: Judges = field(init=False)
    tasks: TaskPipeline = field(init=False)
    pairwise: PairwisePipeline = field(init=False)  # cases judged against a baseline output
    panel: PanelPipeline = field(init=False)  # cases judged by a panel of judges
    spending: Spending = field(init=False)  # prices and the budget each call start asks
    estimating: bool = False  # ``--llmjudge-estimate``: nothing is scheduled, no model is called
    judge_process: JudgeProcesses | None = None  # started before collection (``Judges.process``)

    def __post_init__(self) -> None:
        self.judges = Judges(self.settings, self.root, self.default_model, process=self.judge_process)
        self.spending = Spending(self.settings)
        self.tasks = TaskPipeline(self)
        self.pairwise = PairwisePipeline(self)
        self.panel = PanelPipeline(self, self.combine_panel)

    def task_cases(self, cases: Sequence[CaseToJudge]) -> list[CaseToJudge | ProducedCase]:
        """The cases not settled yet, each with its output: a stored one, or one the output cache
        holds; cases whose task must run go to the scheduler with their judge calls."""
        return [c for c in self.tasks.ready(c for c in cases if not self.has(c.nodeid)) if c is not None]

    # -- scheduling -------------------------------------------------------------------------

    def has(self, nodeid: str) -> bool:
        if nodeid in self.outcomes or self.panel.planned(nodeid):
            return True
        return self.scheduler is not None and self.scheduler.has(nodeid)

    def schedule(self, cases: Sequence[CaseToJudge]) -> None:
        """Settle what checks and the cache decide now; start judge calls for the rest. A run that
        cannot judge raises ``JudgeSetupError``, or with ``setup_errors_per_case`` (an xdist
        worker, which cannot stop the run) settles each unsettled case as that error."""
        if self.estimating:
            return
        try:
            self._schedule(cases)
        except JudgeSetupError as exc:
            if not self.setup_errors_per_case:
                raise
            failure = JudgeFailure("judge-setup", str(exc))
            for case in cases:
                if not self.has(case.nodeid):
                    self.outcomes[case.nodeid] = Outcome(None, failure, "", False, 0)

    def _schedule(self, cases: Sequence[CaseToJudge]) -> None:
        from ..models.models import ModelConfigError

        # a manual case is reviewed by a person: no task runs for it, no judge is asked
        cases = [c for c in cases if c.benchmark.spec.evaluator_type != "manual_sme"]
        if missing := self._without_judge(cases):  # counted before any task or pair is started
            raise JudgeSetupError(NO_MODEL_MESSAGE.format(count=missing))
        needs_judge: list[JudgedCase] = []
        # a panel case whose task runs first: one job, the task then every member
        for case in self.task_cases(self.panel.divert_tasks(self.pairwise.divert(cases))):
            checked = checks_decide(case)
            if checked is not None:
                self.outcomes[case.nodeid] = checked
                continue
            needs_judge.append(case)
        needs_judge = self.panel.divert(needs_judge)  # each member judges on its own
        if not needs_judge:
            return
        judged: list[tuple[JudgedCase, JudgeConfig]] = []
        missing = 0
        for one in needs_judge:
            try:
                judged.append((one, self.judges.config(one.benchmark)))
            except LookupError:
                missing += 1
            except ModelConfigError as exc:
                own = one.benchmark.spec.judge
                if own and own.model:  # the benchmark's own model: an error of its cases only
                    where = one.benchmark.judge_model_location or one.benchmark.location
                    failure = JudgeFailure("judge-setup", f"{where}: judge.model: {exc}")
                    self.outcomes[one.nodeid] = Outcome(None, failure, model=own.model, attempts=0)
                    continue
                raise JudgeSetupError(f"judge model: {exc}") from None
        if missing:
            raise JudgeSetupError(NO_MODEL_MESSAGE.format(count=missing))
        self._start(judged)

    def _start(self, judged: list[tuple[JudgedCase, JudgeConfig]]) -> None:
        """Outcomes the cache settles now (one lookup for all); the rest go to the scheduler."""
        from ..execution.jobs import judge_job
        from ..judging.llmjudge import judge_once

        asks = []
        for case, config in judged:
            for index in range(self.samples_of(case)):
                job = judge_job(case.benchmark.code, case.case.id, case.request, config, index, judge_once)
                asks.append(Ask(sample_key(case.nodeid, index), job, config))
        settled_now, pending = settle_or_judge(self, asks, judge_once)
        for ask, settled in zip(asks, settled_now, strict=True):
            if settled is not None:
                self.outcomes[ask.key] = settled
        send(self, pending)
        if self.scheduler is not None:  # the status line counts the cases the cache settled
            self.scheduler.progress.cache_hits = self.cache_hits

    def _without_judge(self, cases: Sequence[CaseToJudge]) -> int:
        """How many of ``cases`` (no manual ones) a judge must decide although no judge model is
        configured for them (code checks need none)."""
        from ..models.models import ModelConfigError

        missing = 0
        for case in cases:
            if self.has(case.nodeid) or case.benchmark.spec.evaluator_type == "code":
                continue
            if self.panel.panel_of(case.benchmark) is not None:
                continue  # its members name their models
            try:
                self.judges.config(case.benchmark)
            except LookupError:
                missing += 1
            except ModelConfigError:  # reported per benchmark below, or for the run
                continue
        return missing

    def require_price(self, model: str, price: Price | None) -> None:
        """Under a USD budget, a model without a price stops the run before its first call."""
        if (message := self.spending.unpriced_message({model: price})) is not None:
            raise JudgeSetupError(message)

    def samples_of(self, case: JudgedCase) -> int:
        """How many times ``case`` is judged (remembered until its outcome is combined)."""
        return self._repeats.setdefault(case.nodeid, sample_count(case.benchmark, self.settings))

    def start_jobs(self, jobs: list[tuple[str, Job[Outcome]]]) -> None:
        self._scheduler().start(jobs)

    def judge_config(self, case: JudgedCase) -> JudgeConfig:
        """The judge of ``case``'s benchmark, or ``JudgeSetupError`` saying why there is none."""
        from ..models.models import ModelConfigError

        if self.panel.panel_of(case.benchmark) is not None:  # asked before a task runs
            raise JudgeSetupError(task_first(case.benchmark))
        try:
            return self.judges.config(case.benchmark)
        except LookupError:
            raise JudgeSetupError(NO_MODEL_MESSAGE.format(count=1)) from None
        except ModelConfigError as exc:
            own = case.benchmark.spec.judge
            where = f"{case.benchmark.judge_model_location}: judge.model: " if own and own.model else ""
            raise JudgeSetupError(f"{where}judge model: {exc}") from None

    def verdict_cache(self) -> VerdictCache | None:
        """The run's verdict cache, opened on first use and closed with the run; None when off."""
        if self.settings.cache == "off":
            return None
        if self._cache is None:
            from ..execution.cache import CacheError, VerdictCache

            path = self.root / self.settings.cache_path
            if self.settings.cache == "replay" and not path.exists():
                return None  # replay never creates a cache: every case is a (cheap) miss
            try:
                read_only = self.settings.cache == "replay"  # replay never writes: a read-only cache serves
                self._cache = VerdictCache(
                    path, batch=CACHE_BATCH, batch_seconds=CACHE_BATCH_SECONDS, read_only=read_only
                )
            except CacheError as exc:
                raise JudgeSetupError(f"--llmjudge-cache-path: {exc}") from None
        return self._cache

    def check_cache(self) -> None:
        """Open and close the verdict cache now, so an unusable file is one ``JudgeSetupError``
        before any work starts (an xdist controller, before each worker meets it)."""
        cache = self.verdict_cache()
        if cache is not None:
            cache.close()
            self._cache = None

    def _scheduler(self) -> Scheduler[Outcome]:
        if self.scheduler is None:
            from ..execution.retries import tally
            from ..execution.scheduler import Scheduler

            s = self.settings
            self.scheduler = Scheduler(
                s.concurrency, s.rpm, tally, self.waiting(), limits=self.judges.endpoint_slots
            )
        return self.scheduler

    def outcome(self, case: CaseToJudge) -> Outcome:
        """``case``'s outcome, waiting for its judge calls if they are still running; a case judged
        more than once gets the outcome ``combine`` makes of its samples."""
        if case.nodeid not in self.outcomes:
            if not self.has(case.nodeid):
                self.schedule([case])
            if self.panel.planned(case.nodeid):
                self.outcomes[case.nodeid] = self.panel.result(case)
            if case.nodeid not in self.outcomes:
                self.outcomes[case.nodeid] = self._scheduler().result(case.nodeid)
        repeats = self._repeats.pop(case.nodeid, 1)
        if repeats > 1:
            samples = [self.outcomes[case.nodeid]]
            for index in range(1, repeats):
                key = sample_key(case.nodeid, index)
                samples.append(
                    self.outcomes.pop(key) if key in self.outcomes else self._scheduler().result(key)
                )
            combined = self.combine(case.benchmark, samples) if self.combine else samples[0]
            self.outcomes[case.nodeid] = combined
        return self.outcomes[case.nodeid]

    def cancel_pending(self, keep: Container[str] = ()) -> None:
        """Drop judge calls not yet started (deselected items, or -x / --maxfail stopped the run)."""
        if self.scheduler is not None:
            self.scheduler.cancel_pending(_SamplesOf(keep))

    def close(self) -> None:
        """Stop the scheduler, write the cache, stop the local servers this run started."""
        if self.scheduler is not None:
            self.scheduler.close()
            self.scheduler = None
        if self._cache is not None:
            self._cache.close()
            self.cache_write_errors += self._cache.write_errors
            self._cache = None
        self.cache_write_errors += self.tasks.close()
        self.judges.stop()
        self.spending.close()


@dataclass(frozen=True)
class _SamplesOf:
    """Keeps every sample of the kept node ids."""

    nodeids: Container[str]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.split(SAMPLE_SEPARATOR, 1)[0] in self.nodeids
