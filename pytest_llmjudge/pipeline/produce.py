"""One path to a case's output, for every pipeline: a case without a task (or with a stored
output) is judged as it is; a task's output the output cache holds is used; a task that cannot
run errors its case; any other task runs first, in a scheduler job started after
``prepare_task_start`` checked its prices and started its local task server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..judging.verdict import JudgeFailure
    from ..models.config import JudgeConfig
    from .host import CaseToJudge, Host
    from .task_step import Planned, Produced, TaskStep


@dataclass(frozen=True)
class TaskOutput:
    """What a case's task step decided when the case was scheduled: exactly one is set."""

    produced: Produced | None = None  # the output cache held it
    planned: Planned | None = None  # the task runs first
    failure: JudgeFailure | None = None  # the task cannot run: the case errors without a call


def produce_or_settle(step: TaskStep, case: CaseToJudge) -> TaskOutput | None:
    """``case``'s output from its task step; None when it needs no task (its own output is judged)."""
    from .task_step import TaskFailed

    if case.task is None or not step.needs_task(case.task, case.case):
        return None
    try:
        planned = step.plan(case.task, case.benchmark.code, case.case)
        produced = step.cached(planned)
    except TaskFailed as exc:
        return TaskOutput(failure=exc.failure)
    return TaskOutput(planned=planned) if produced is None else TaskOutput(produced=produced)


def prepare_task_start(
    host: Host, case: CaseToJudge, planned: Planned, judged: bool = True
) -> JudgeConfig | None:
    """Before a job runs ``case``'s task: the judge (None for a ``code`` case, whose checks
    decide, or with ``judged`` False: a panel's members, which the caller configures) and, under
    a USD budget, the judge's and the task model's prices checked; a local task server started
    here, not on the scheduler's loop. The judge's own local server starts only once an output
    needs it (``TaskOutputs.served``)."""
    from ..judging.preload import load_judging

    config = None
    if judged and case.benchmark.spec.evaluator_type != "code":
        config = host.judge_config(case)
        host.require_price(config.model_name, config.price)
    step = host.tasks.step
    if planned.built.model is not None:
        host.require_price(planned.built.task.label, step.price(planned))
        step.model_of(planned.built.model, planned.built.base_url)
    load_judging()
    return config
