"""Cases whose output a task produces, in the judging service: settled from the output cache when
they are scheduled, or handed to the scheduler as jobs that run the task and then judge."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from ..execution.samples import sample_key
from ..judging.verdict import JudgeFailure, Outcome
from .host import CaseToJudge, Host, ProducedCase
from .produce import prepare_task_start, produce_or_settle
from .settle import checks_decide, settle_or_judge_now
from .task_step import Planned, Produced, TaskFailed, TaskStep, with_output

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
    from ..execution.scheduler import Job, Slots
    from ..models.config import JudgeConfig


class TaskPipeline:
    def __init__(self, service: Host) -> None:
        self.service = service
        self.step = TaskStep(service.settings, service.root, service.judges.task_model, service.spending)
        self.produced: dict[str, Produced] = {}  # node id -> the output a task produced
        self.requests: dict[str, CompiledRequest] = {}  # node id -> its judge request, recompiled
        self._server_failure: JudgeFailure | None = None  # the judge's local server did not start
        self._served_configs: dict[int, tuple[JudgeConfig, JudgeConfig]] = {}  # id -> (asked, served)

    def ready(self, cases: Iterable[CaseToJudge]) -> Iterable[CaseToJudge | ProducedCase | None]:
        """Each case, with its output when the cache holds it; None for a case handed to the
        scheduler (its task runs first) or settled as a task ERROR."""
        for case in cases:
            output = produce_or_settle(self.step, case)
            if output is None:
                yield case
            elif output.produced is not None:
                yield self.with_produced(case, output.produced)
            elif output.planned is not None:
                self._start(case, output.planned)
                yield None
            else:
                self.service.outcomes[case.nodeid] = Outcome(None, output.failure, "", False, 0)
                yield None

    def with_produced(self, case: CaseToJudge, produced: Produced) -> ProducedCase:
        """``case`` with the output its task produced, its judge request recompiled (both kept)."""
        own = with_output(case.case, produced.output)
        request: CompiledRequest = case.recompile(own)
        self.produced[case.nodeid] = produced
        self.requests[case.nodeid] = request
        return ProducedCase(case.nodeid, case.benchmark, own, request)

    def _start(self, case: CaseToJudge, planned: Planned) -> None:
        """Jobs that run the case's task, then judge each sample as soon as the output exists."""
        config = prepare_task_start(self.service, case, planned)
        samples = self.service.samples_of(case) if config is not None else 1
        jobs: list[tuple[str, Job[Outcome]]] = [
            (sample_key(case.nodeid, index), partial(self._run, case, planned, config, index))
            for index in range(samples)
        ]
        self.service.start_jobs(jobs)

    async def _run(
        self, case: CaseToJudge, planned: Planned, config: JudgeConfig | None, sample: int, slots: Slots
    ) -> Outcome:
        try:
            produced = await self.step.produce(case.nodeid, planned, slots)
        except TaskFailed as exc:
            return Outcome(None, exc.failure, "", False, 0)
        view = self.with_produced(case, produced)
        if config is not None:
            try:
                config = await self.served(config)
            except JudgeFailure as failure:
                return Outcome(None, failure, config.model_name, False, 0)
        return await self.judge_now(view, config, sample, slots)

    async def served(self, config: JudgeConfig) -> JudgeConfig:
        """``config`` with its local judge server started: only once a produced output needs a
        judge (a run whose tasks all fail starts none), in a worker thread (a start takes
        seconds, and the loop goes on). A server that cannot start is each case's ERROR."""
        import asyncio

        from ..models.judges import JudgeSetupError

        if self._server_failure is not None:
            raise self._server_failure
        known = self._served_configs.get(id(config))
        if known is not None and known[0] is config:
            return known[1]
        try:
            served = await asyncio.to_thread(self.service.judges.with_server, config)
        except JudgeSetupError as exc:
            self._server_failure = JudgeFailure("judge-setup", str(exc))
            raise self._server_failure from None
        self._served_configs[id(config)] = (config, served)
        return served

    async def judge_now(
        self, case: ProducedCase, config: JudgeConfig | None, sample: int, slots: Slots
    ) -> Outcome:
        """Judge one sample of a case whose output a task just produced: its checks, the verdict
        cache, then the judge (on the scheduler's loop, holding a slot only while calling)."""
        from ..execution.jobs import judge_job
        from ..judging.llmjudge import judge_once

        checked = checks_decide(case)
        if checked is not None:
            return checked
        assert config is not None
        job = judge_job(case.benchmark.code, case.case.id, case.request, config, sample, judge_once)
        return await settle_or_judge_now(self.service, job, config, judge_once, slots)

    def close(self) -> list[str]:
        """Close the output cache; what it could not write."""
        self.step.close()
        return list(self.step.write_errors)
