"""Panel cases in the judging service: each member judges the case on its own, through the same
cache, scheduler, slots, budget and retries as a single judge (``settle.settle_or_judge``).

A member's call is the call a single judge of that model would make, cached under the same key
(request, model, settings, sample): adding or removing a member reuses the others' verdicts, and
a benchmark that had one of them as its single judge reuses that judge's. Repeats apply per
member. The case's outcome (each member's samples reduced, then the panel's vote) is made by
``combine``, which the glue hands in (``gating.panel_outcome.combine_panel``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ..execution.samples import SAMPLE_SEPARATOR
from ..judging.verdict import JudgeFailure, Outcome
from ..models.judges import JudgeSetupError
from ..suite.files import JudgeSettings
from ..suite.settings import panel_for
from .settle import Ask, checks_decide, sample_count, send, settle_or_judge, settle_or_judge_now

PAIR_RANK = {"loss": 0, "tie": 1, "win": 2}  # the candidate's outcomes, worst first

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
    from ..execution.jobs import JudgeOnce
    from ..execution.scheduler import Slots
    from ..models.config import JudgeConfig
    from ..suite.files import Benchmark
    from ..suite.panel_spec import Panel, PanelMember
    from .host import CaseToJudge, Host, JudgedCase
    from .task_step import Planned

# each member's samples (in the panel's order) into the case's outcome: rule, min_members
CombinePanel = Callable[["Benchmark", Sequence[Sequence[Outcome]], str, int], Outcome]


def panel_label(rule: str, min_members: int, members: Sequence[str]) -> str:
    """``panel(majority, 2 of 3): a, b, c``: the judge a panel case's record names."""
    return f"panel({rule}, {min_members} of {len(members)}): {', '.join(members)}"


def pair_vote(outcomes: Sequence[str | None], rule: str, min_members: int) -> str | None:
    """A panel's pairwise outcome for the candidate from its members' (``win``, ``loss``, ``tie``,
    ``inconsistent``; None: the member errored); None when fewer than ``min_members`` answered.

    A member's ``inconsistent`` pair counts as a tie, as in the statistics. ``majority``: the
    outcome more than half the members that answered name, else ``inconsistent`` (the panel has no
    majority: counted as a tie, and the case goes to review); ``unanimous``: the worst outcome any
    member names (a win needs every member's); ``any``: the best.
    """
    answered = ["tie" if o == "inconsistent" else o for o in outcomes if o is not None]
    if len(answered) < min_members or not answered:
        return None
    if rule == "majority":
        found = [o for o in PAIR_RANK if 2 * answered.count(o) > len(answered)]
        return found[0] if found else "inconsistent"
    ranked = sorted(answered, key=PAIR_RANK.__getitem__)
    return ranked[0] if rule == "unanimous" else ranked[-1]


def too_few_answered(answered: int, members: int, least: int, failures: Sequence[tuple[str, str]]) -> str:
    """Why a panel could not decide a case: ``only 1 of 3 panel judges answered, 2 needed: M2, M3:
    http-400: …``, the members that failed alike named together (so a budget stop reads as one)."""
    grouped: dict[str, list[str]] = {}
    for model, failure in failures:
        grouped.setdefault(failure, []).append(model)
    said = "; ".join(f"{', '.join(models)}: {failure}" for failure, models in grouped.items())
    return f"only {answered} of {members} panel judges answered, {least} needed: {said}"


def member_key(nodeid: str, member: int, sample: int) -> str:
    """The name of one member's sample in the scheduler (``_SamplesOf`` keeps it with its case)."""
    return f"{nodeid}{SAMPLE_SEPARATOR}member {member}.{sample}"


def member_benchmark(benchmark: Benchmark, member: PanelMember) -> Benchmark:
    """``benchmark`` as a single judge ``member`` would judge it: its model, and its own base URL
    or the benchmark's (the run's, else), with every other judge setting kept."""
    own = benchmark.spec.judge or JudgeSettings()
    judge = own.model_copy(
        update={"model": member.model, "base_url": member.base_url or own.base_url, "panel": None}
    )
    return replace(benchmark, spec=benchmark.spec.model_copy(update={"judge": judge}))


def task_first(benchmark: Benchmark) -> str:
    """Why a panel benchmark has no single judge to ask (its members are asked one by one)."""
    return f"{benchmark.location}: {benchmark.code} is judged by a panel: each member is its own judge"


def panel_or_error(benchmark: Benchmark, settings: Any) -> Panel | None:
    """``benchmark``'s panel, None for a single judge; ``JudgeSetupError`` when its
    ``min_members`` exceeds the run's panel."""
    try:
        return panel_for(benchmark, settings)
    except ValueError as exc:
        raise JudgeSetupError(f"{benchmark.location}: {exc}") from None


def member_configs(host: Host, benchmark: Benchmark, panel: Panel) -> list[JudgeConfig | Outcome]:
    """Each member's judge, in the panel's order; the ERROR outcome of a member whose model
    cannot be configured (the others still judge)."""
    from ..models.models import ModelConfigError

    found: list[JudgeConfig | Outcome] = []
    for member in panel.members:
        try:
            found.append(host.judges.config(member_benchmark(benchmark, member)))
        except ModelConfigError as exc:
            message = f"{benchmark.location}: panel judge {member.label}: {exc}"
            found.append(Outcome(None, JudgeFailure("judge-setup", message), member.label, attempts=0))
    return found


@dataclass(frozen=True)
class MemberCase:
    """A panel case as one member judges it: the case, with the member's benchmark (the estimate
    plans each member's calls as a single judge's)."""

    item: Any  # the case as the glue hands it over (its ``case`` is the file's case)
    benchmark: Benchmark

    def __getattr__(self, name: str) -> Any:
        return getattr(self.item, name)


def judged_as(benchmark: Benchmark, case: Any, settings: Any) -> list[tuple[str, Any]]:
    """Who judges ``case``, each with the name its calls are estimated under: the case itself
    under its benchmark's code for a single judge; per member of a panel, ``CODE (MEMBER)`` and
    the case as that member judges it."""
    try:
        panel = panel_for(benchmark, settings)
    except ValueError:
        panel = None  # the run reports it (a setup error) before any call
    if panel is None:
        return [(benchmark.code, case)]
    return [
        (f"{benchmark.code} ({member.label})", MemberCase(case, member_benchmark(benchmark, member)))
        for member in panel.members
    ]


@dataclass
class _Plan:
    panel: Panel
    keys: list[list[str]] = field(default_factory=list)  # per member, per sample
    setup: dict[int, Outcome] = field(default_factory=dict)  # members that cannot judge at all
    task_key: str | None = None  # a job running the case's task, then every member


class PanelPipeline:
    def __init__(self, host: Host, combine: CombinePanel | None) -> None:
        self.host = host
        self.combine = combine
        self._plans: dict[str, _Plan] = {}

    def panel_of(self, benchmark: Benchmark) -> Panel | None:
        """``benchmark``'s panel, None for a single judge; ``JudgeSetupError`` when its
        ``min_members`` exceeds the run's panel."""
        return panel_or_error(benchmark, self.host.settings)

    def planned(self, nodeid: str) -> bool:
        return nodeid in self._plans

    def divert(self, cases: Sequence[JudgedCase]) -> list[JudgedCase]:
        """Start the member calls of the panel cases among ``cases`` (the cache settles what it
        can); the others, for the single-judge path."""
        from ..judging.llmjudge import judge_once

        rest: list[JudgedCase] = []
        asks: list[Ask] = []
        for case in cases:
            panel = self.panel_of(case.benchmark)
            if panel is None:
                rest.append(case)
            elif case.nodeid not in self._plans:
                asks += self._plan(case, panel, judge_once)
        if asks:
            settled_now, pending = settle_or_judge(self.host, asks, judge_once)
            for ask, settled in zip(asks, settled_now, strict=True):
                if settled is not None:
                    self.host.outcomes[ask.key] = settled
            send(self.host, pending)
        return rest

    def divert_tasks(self, cases: Sequence[CaseToJudge]) -> list[CaseToJudge]:
        """Start the panel cases among ``cases`` whose task must run first: one job each, the task
        (its output produced once) then every member judging it; the others, for the task step."""
        from .produce import produce_or_settle

        rest: list[CaseToJudge] = []
        for case in cases:
            if case.benchmark.spec.evaluator_type == "code" or case.nodeid in self._plans:
                rest.append(case)
                continue
            panel = self.panel_of(case.benchmark)
            output = None if panel is None else produce_or_settle(self.host.tasks.step, case)
            if panel is None or output is None or output.planned is None:
                rest.append(case)  # no task to run now (a stored output, or the task cannot run)
            else:
                self._start_task(case, output.planned, panel)
        return rest

    def _start_task(self, case: CaseToJudge, planned: Planned, panel: Panel) -> None:
        from .produce import prepare_task_start

        prepare_task_start(self.host, case, planned, judged=False)
        configs = member_configs(self.host, case.benchmark, panel)
        for config in configs:
            if not isinstance(config, Outcome):
                self.host.require_price(config.model_name, config.price)
        key = member_key(case.nodeid, len(configs), 0)  # past the members' own keys
        self._plans[case.nodeid] = _Plan(panel, task_key=key)
        self.host.start_jobs([(key, partial(self._run_task, case, planned, panel, configs))])

    async def _run_task(
        self,
        case: CaseToJudge,
        planned: Planned,
        panel: Panel,
        configs: list[JudgeConfig | Outcome],
        slots: Slots,
    ) -> Outcome:
        """The case's output from its task, then each member's samples of it, then the vote."""
        from .task_step import TaskFailed

        try:
            produced = await self.host.tasks.step.produce(case.nodeid, planned, slots)
        except TaskFailed as exc:
            return Outcome(None, exc.failure, "", False, 0)
        view = self.host.tasks.with_produced(case, produced)
        checked = checks_decide(view)  # a hybrid case's checks fail: no judge is asked
        if checked is not None:
            return checked
        samples = sample_count(case.benchmark, self.host.settings)
        members = await asyncio.gather(*(self._member_now(view, c, samples, slots) for c in configs))
        return self._combine(case.benchmark, members, panel)

    async def _member_now(
        self, case: JudgedCase, config: JudgeConfig | Outcome, samples: int, slots: Slots
    ) -> list[Outcome]:
        """One member's samples of a case whose output a task just produced."""
        from ..execution.jobs import judge_job
        from ..judging.llmjudge import judge_once

        if isinstance(config, Outcome):  # it cannot judge: its ERROR
            return [config]
        try:
            config = await self.host.tasks.served(config)
        except JudgeFailure as failure:
            return [Outcome(None, failure, config.model_name, False, 0)]
        jobs = [
            judge_job(case.benchmark.code, case.case.id, case.request, config, sample, judge_once)
            for sample in range(samples)
        ]
        return list(
            await asyncio.gather(
                *(settle_or_judge_now(self.host, j, config, judge_once, slots) for j in jobs)
            )
        )

    def _combine(self, benchmark: Benchmark, members: Sequence[Sequence[Outcome]], panel: Panel) -> Outcome:
        if self.combine is None:
            return members[0][0]
        return self.combine(benchmark, members, panel.rule, panel.min_members)

    def _plan(self, case: JudgedCase, panel: Panel, kind: JudgeOnce[CompiledRequest]) -> list[Ask]:
        from ..execution.jobs import judge_job

        plan = self._plans[case.nodeid] = _Plan(panel)
        samples = sample_count(case.benchmark, self.host.settings)
        asks = []
        for index, config in enumerate(member_configs(self.host, case.benchmark, panel)):
            plan.keys.append([])
            if isinstance(config, Outcome):
                plan.setup[index] = config
                continue
            for sample in range(samples):
                key = member_key(case.nodeid, index, sample)
                job = judge_job(case.benchmark.code, case.case.id, case.request, config, sample, kind)
                asks.append(Ask(key, job, config))
                plan.keys[index].append(key)
        return asks

    def result(self, case: JudgedCase) -> Outcome:
        """The case's outcome once every member's samples are in (waiting for those still running)."""
        plan = self._plans.pop(case.nodeid)
        if plan.task_key is not None:
            return self._sample(plan.task_key)
        members: list[list[Outcome]] = []
        for index, keys in enumerate(plan.keys):
            if index in plan.setup:
                members.append([plan.setup[index]])
                continue
            members.append([self._sample(key) for key in keys])
        return self._combine(case.benchmark, members, plan.panel)

    def _sample(self, key: str) -> Outcome:
        outcomes = self.host.outcomes
        if key in outcomes:
            return outcomes.pop(key)
        scheduler = self.host.scheduler
        assert scheduler is not None, f"{key} was neither settled nor scheduled"
        return scheduler.result(key)
