"""What the pipelines see of a case and of the judging service that runs them.

``CaseToJudge`` is a benchmark case as the glue hands it over (``glue.nodes.CaseItem``),
``PairToJudge`` a pairwise one (``glue.pairwise_items.PairwiseItem``); ``Host`` is the judging
service (``pipeline.service.JudgingService``) as the single-case, pairwise and task flows use it.
Protocols only: this module imports no pipeline, so every pipeline can import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..compile.pairwise import PairwiseRequest
    from ..compile.request import CompiledRequest
    from ..cost.pricing import Price
    from ..cost.spending import Spending
    from ..execution.cache import VerdictCache
    from ..execution.scheduler import Job, Scheduler
    from ..judging.verdict import Outcome
    from ..models.answered import Answered
    from ..models.config import JudgeConfig
    from ..models.judges import Judges
    from ..suite.files import Benchmark, Case
    from ..suite.settings import RunSettings
    from ..tasks.build import BuiltTask
    from .task_step import Produced, TaskStep


class JudgedCase(Protocol):
    """A case and the judge request compiled for it."""

    @property
    def nodeid(self) -> str: ...
    @property
    def benchmark(self) -> Benchmark: ...
    @property
    def case(self) -> Case: ...
    @property
    def request(self) -> CompiledRequest: ...


class CaseToJudge(JudgedCase, Protocol):
    """A case with its compiled judge request, and the task that produces its output (if any)."""

    @property
    def task(self) -> BuiltTask | None: ...

    def recompile(self, case: Case) -> CompiledRequest:
        """The judge request of ``case`` (this case with the output its task produced)."""
        ...


@dataclass(frozen=True)
class ProducedCase:
    """A case with the output its task produced, and the judge request compiled for it."""

    nodeid: str
    benchmark: Benchmark
    case: Case
    request: CompiledRequest


@dataclass(frozen=True)
class Baseline:
    """The output a case's candidate output is compared with, and where it came from
    (``case file``: the case's ``baseline_output``; ``baseline results``: the baseline run's)."""

    output: Any  # any JSON value a case file or a results file holds
    source: str


class PairToJudge(CaseToJudge, Protocol):
    """A pairwise case: its candidate output against its baseline's, asked in both orders."""

    pairwise_mode: bool

    @property
    def baseline(self) -> Baseline | None: ...

    def pair_requests(self, candidate_output: Any) -> tuple[PairwiseRequest, PairwiseRequest]: ...


class TaskOutputs(Protocol):
    """The run's task step and the outputs it produced, by node id."""

    step: TaskStep
    produced: dict[str, Produced]

    def with_produced(self, case: CaseToJudge, produced: Produced) -> ProducedCase:
        """``case`` with the output its task produced, its judge request recompiled (both kept)."""
        ...

    async def served(self, config: JudgeConfig) -> JudgeConfig:
        """``config`` with its local judge server started, once an output needs a judge;
        raises ``JudgeFailure`` when it cannot start."""
        ...


class Host(Protocol):
    """What the pipelines need of the judging service."""

    settings: RunSettings
    root: Path
    judges: Judges
    outcomes: dict[str, Outcome]
    spending: Spending  # prices and the run's budget
    cache_hits: int
    scheduler: Scheduler[Outcome] | None
    resolved: dict[str, Answered]  # model string -> the snapshot it answered as in this run

    @property
    def tasks(self) -> TaskOutputs: ...

    def schedule(self, cases: Sequence[CaseToJudge]) -> None: ...
    def judge_config(self, case: JudgedCase) -> JudgeConfig: ...
    def require_price(self, model: str, price: Price | None) -> None: ...
    def samples_of(self, case: JudgedCase) -> int: ...
    def start_jobs(self, jobs: list[tuple[str, Job[Outcome]]]) -> None: ...
    def verdict_cache(self) -> VerdictCache | None: ...
