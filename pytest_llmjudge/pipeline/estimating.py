"""The calls a run would make, found without making any (``--llmjudge-estimate``).

Each case's judge request is looked up in the verdict cache (opened read-only) and its task's
output in the output cache; what they cannot answer is a call. Nothing is scheduled, no judge
model is built (a hook's model object is only asked for its name), no local server starts.
``gating.estimate`` turns the calls into tokens and dollars. Knows nothing of pytest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..execution.projection import judge_tokens

if TYPE_CHECKING:
    from ..compile.pairwise import PairwiseRequest
    from ..compile.request import CompiledRequest
    from ..cost.pricing import Price
    from ..cost.tokens import ModelTokens
    from ..execution.cache import VerdictCache
    from ..suite.files import Benchmark
    from .host import Baseline, CaseToJudge
    from .service import JudgingService
    from .task_step import Planned


# A judge as the estimate sees it: its label, price and answer settings (pydantic-ai's ModelSettings).
PlannedJudge = tuple[str, "Price | None", Mapping[str, Any]]


@dataclass
class PlannedCalls:
    """The calls one benchmark's cases would make that the caches cannot answer."""

    benchmark: str
    judge: str = ""  # the judge's label
    judge_tokens: ModelTokens | None = None  # None: no case needs its judge
    misses: list[tuple[str, int]] = field(default_factory=list)  # (request text, samples missing)
    cached: int = 0  # judge samples the verdict cache answers
    task: str = ""  # the model task's label
    task_tokens: ModelTokens | None = None
    task_requests: list[str] = field(default_factory=list)  # the task requests to send


def plan_calls(service: JudgingService, cases: Sequence[CaseToJudge]) -> tuple[list[PlannedCalls], list[str]]:
    """Per benchmark (in order of appearance), the calls ``cases`` would make (each order of a
    pairwise case its own request); and the problems that keep cases from being estimated (no
    judge model), one line each."""
    from ..execution.cache import CacheError
    from .panel import judged_as

    plans: dict[str, PlannedCalls] = {}
    problems: dict[str, None] = {}
    try:
        cache = _read_only_cache(service)
    except CacheError as exc:
        return [], [f"--llmjudge-cache-path: {exc}"]
    try:
        for case in cases:  # a panel's case: each member's calls, under its own name
            for index, (name, judged) in enumerate(judged_as(case.benchmark, case, service.settings)):
                plan = plans.setdefault(name, PlannedCalls(name))
                problem = _plan_case(service, judged, plan, cache, task=index == 0)
                if problem:
                    problems[problem] = None
    finally:
        if cache is not None:
            cache.close()
    return list(plans.values()), list(problems)


def _read_only_cache(service: JudgingService) -> VerdictCache | None:
    """The run's verdict cache, read-only (an estimate changes nothing); None when off or absent."""
    from ..execution.cache import VerdictCache

    path = service.root / service.settings.cache_path
    if service.settings.cache == "off" or not path.is_file():
        return None
    return VerdictCache(path, read_only=True)


@dataclass(frozen=True)
class _Judged:
    """What a case's judge would be asked: its request, the output it is judged on, and for a
    pairwise case the baseline that output is compared with."""

    request: CompiledRequest
    output: Any  # any JSON value
    baseline: Baseline | None


def _plan_case(
    service: JudgingService,
    case: CaseToJudge,
    plan: PlannedCalls,
    cache: VerdictCache | None,
    task: bool = True,
) -> str:
    """Add ``case``'s calls to ``plan`` (its task's too with ``task``: a panel's first member's);
    a problem that keeps it from being estimated, or ""."""
    judged = _judged(service, case, plan, task)
    if judged is None:
        return ""
    judge = _judge_of(service, case.benchmark)
    if isinstance(judge, str):
        return judge
    _plan_requests(service, case.benchmark, _requests_of(case, judged), judge, plan, cache)
    return ""


def _judged(service: JudgingService, case: CaseToJudge, plan: PlannedCalls, task: bool) -> _Judged | None:
    """What ``case``'s judge would be asked (its task's call added to ``plan`` with ``task``, when
    its output is still to come); None when the case makes no judge call."""
    from .pairwise_pipeline import is_pair
    from .produce import produce_or_settle
    from .settle import checks_decide
    from .task_step import with_output

    kind = case.benchmark.spec.evaluator_type
    if kind == "manual_sme":
        return None  # decided by a person: no model call, no task run
    baseline = case.baseline if is_pair(case) else None
    pairwise = is_pair(case)
    if pairwise and baseline is None:
        return None  # unpaired: never judged
    request, output = case.request, case.case.spec.candidate_output
    task_output = produce_or_settle(service.tasks.step, case)
    if task_output is not None and task_output.failure is not None:
        return None  # the case errors without a call
    if task_output is not None and task_output.produced is not None:
        output = task_output.produced.output
        request = case.recompile(with_output(case.case, output))
    elif task_output is not None and task_output.planned is not None:
        # judged on the output to come: counted as the placeholder's (or the baseline's)
        if task:
            _plan_task(service, task_output.planned, plan)
        output = baseline.output if baseline is not None else output
    elif not pairwise and checks_decide(case) is not None:
        return None  # its checks fail it: the judge is not asked
    if kind == "code":
        return None  # decided by its checks (a model task producing its output is counted above)
    return _Judged(request, output, baseline)


def _judge_of(service: JudgingService, benchmark: Benchmark) -> PlannedJudge | str:
    """The label, price and settings of ``benchmark``'s judge; or the problem that keeps its
    calls from being counted."""
    from ..models.models import ModelConfigError

    try:
        return service.judges.planned(benchmark)
    except LookupError:
        return (
            "no judge model is configured (--llmjudge-model, LLMJUDGE_MODEL, llmjudge_model or "
            "judge.model): the judge calls of cases without one are not counted"
        )
    except ModelConfigError as exc:
        return f"{benchmark.code}: judge model: {exc}"


def _requests_of(case: CaseToJudge, judged: _Judged) -> Sequence[CompiledRequest | PairwiseRequest]:
    """The requests sent for ``judged``: its one request; for a pairwise case each order its own,
    none when the two outputs are identical."""
    from .pairwise_pipeline import is_pair

    if judged.baseline is None or not is_pair(case):
        return (judged.request,)
    from ..compile.pairwise import identical_outputs

    return (
        () if identical_outputs(judged.output, judged.baseline.output) else case.pair_requests(judged.output)
    )


def _plan_requests(
    service: JudgingService,
    benchmark: Benchmark,
    requests: Sequence[CompiledRequest | PairwiseRequest],
    judge: PlannedJudge,
    plan: PlannedCalls,
    cache: VerdictCache | None,
) -> None:
    """Add to ``plan`` the samples of ``requests`` the verdict cache answers, and those it misses
    (none under ``--llmjudge-cache=replay``: a miss there is no call), with the judge's tokens."""
    from ..execution.cache import cache_key
    from ..execution.projection import sent_text_of
    from .settle import sample_count

    label, price, settings = judge
    repeats = sample_count(benchmark, service.settings)
    mode = service.settings.cache
    for sent in requests:
        keys = [cache_key(sent.digest, label, settings, sample) for sample in range(repeats)]
        found = cache.get_many(keys) if cache is not None and mode in {"use", "replay"} else {}
        missing = 0 if mode == "replay" else sum(1 for key in keys if key not in found)  # replay: no call
        plan.cached += sum(1 for key in keys if key in found)
        if not missing:
            continue
        plan.judge = label
        if plan.judge_tokens is None:
            plan.judge_tokens = judge_tokens(
                service.spending,
                benchmark.code,
                label,
                price,
                style=sent.prompt_style,
                max_tokens=settings.get("max_tokens"),
                cache=cache,
            )
        plan.misses.append((sent_text_of(sent), missing))


def _plan_task(service: JudgingService, planned: Planned, plan: PlannedCalls) -> None:
    """A model task's call for ``planned`` (a Python task's calls are not seen)."""
    from ..tasks.model_task import ModelTask, messages_text

    task = planned.built.task
    if planned.request is None or not isinstance(task, ModelTask) or service.settings.task_cache == "replay":
        return
    plan.task = task.label
    if plan.task_tokens is None:
        plan.task_tokens = service.tasks.step.tokens(planned, service.spending)
    plan.task_requests.append(messages_text(planned.request.messages))
