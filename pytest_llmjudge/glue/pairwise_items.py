"""Pairwise benchmarks' items: each case's output judged against its baseline output in both
orders (``pipeline.pairwise_pipeline``); the item passes on a win, tie or inconsistent pair, fails
on a loss with both answers, and skips an unpaired case (no baseline output: never judged)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pytest

from ..compile.pairwise import PairwiseRequest, compile_both_orders
from ..gating.panel_records import MemberRecord, PanelRecord
from ..gating.records import CaseRecord, JudgeFacts, JudgeFingerprint, PairAnswerRecord, PairwiseRecord
from ..judging.verdict import Outcome
from ..pipeline.pairwise_pipeline import Baseline, OrderAnswer, PairResult
from ..reporting.failures import JudgeErrored
from ..reporting.pairwise import NO_OUTPUT, loss_report, recorded_cases
from .nodes import CaseItem, awaiting
from .stash import run_host

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
    from .nodes import BenchmarkNode

_RECORDED = pytest.StashKey[dict[str, dict[str, Any]]]()  # the baseline run's cases, read once


class PairLost(Exception):
    """The judge preferred the baseline's output (a loss in both orders, or in one and a tie)."""

    def __init__(self, result: PairResult) -> None:
        super().__init__("pairwise: loss")
        self.result = result


def recorded(config: pytest.Config) -> dict[str, dict[str, Any]]:
    """The baseline run's release cases (code → id → recorded output); empty without a baseline.

    The controller read ``--llmjudge-baseline`` when the run started; an xdist worker reads it
    here (one that cannot be read gives no outputs: its cases are unpaired)."""
    if _RECORDED not in config.stash:
        from .run_results import baseline_of

        baseline, _ = baseline_of(config)
        settings = run_host(config).settings
        if baseline is None and settings.baseline and hasattr(config, "workerinput"):
            from ..reporting.results_file import ResultsFileError, load_results
            from .outputs import output_path

            try:
                baseline = load_results(output_path(config, "baseline", settings.baseline))
            except ResultsFileError:
                baseline = None
        config.stash[_RECORDED] = recorded_cases(baseline) if baseline is not None else {}
    return config.stash[_RECORDED]


@dataclass(frozen=True)
class PairwiseSetup:
    """A pairwise benchmark's baselines, and the requests its prompt snapshot shows."""

    baselines: dict[str, Baseline | None]
    baseline_only: tuple[str, ...]
    prompt_requests: dict[str, CompiledRequest | PairwiseRequest]
    baseline_note: str = ""  # the baseline as this benchmark sees it (``baseline_note``)


def pairwise_setup(
    node: BenchmarkNode, requests: dict[str, CompiledRequest], style: str
) -> PairwiseSetup | None:
    """The pairwise setup of ``node``'s benchmark; None when it is judged case by case."""
    from ..suite.settings import pairwise_mode

    benchmark = node.benchmark
    if not pairwise_mode(benchmark, run_host(node.config).settings):
        return None
    before = recorded(node.config).get(benchmark.code, {})
    baselines: dict[str, Baseline | None] = {}
    prompt: dict[str, CompiledRequest | PairwiseRequest] = {}
    for case in benchmark.cases:
        if case.spec.baseline_output is not None:
            baselines[case.id] = Baseline(case.spec.baseline_output, "case file")
        elif before.get(case.id, NO_OUTPUT) is not NO_OUTPUT:
            baselines[case.id] = Baseline(before[case.id], "baseline results")
        else:
            baselines[case.id] = None
        found = baselines[case.id]
        if found is not None:  # what the judge is told: the candidate-first request
            candidate = awaiting(case, node.task).spec.candidate_output
            first, _ = compile_both_orders(benchmark, node.sections, case, candidate, found.output, style)
            prompt[case.id] = first
    ids = {case.id for case in benchmark.cases}
    note = baseline_note(node.config, benchmark.code, ids)
    return PairwiseSetup(baselines, tuple(sorted(set(before) - ids)), prompt or dict(requests), note)


def baseline_note(config: pytest.Config, code: str, ids: set[str]) -> str:
    """The baseline as benchmark ``code`` (case ``ids``) sees it, naming it: why its cases find
    no output there, if they do not (the pairwise gate says it when nothing is paired)."""
    given = run_host(config).settings.baseline
    if not given:
        return "no --llmjudge-baseline given, and no case has a baseline_output of its own"
    name = f"--llmjudge-baseline {given}"
    everything = recorded(config)
    if not everything:
        from .run_results import baseline_of

        _, error = baseline_of(config)
        return f"{name} was not read ({error})" if error else f"{name} holds no release case"
    before = everything.get(code)
    if before is None:
        return f"{name} has no benchmark {code}"
    if not ids & set(before):
        return f"{name} has none of {code}'s case ids (it has {len(before)} others)"
    if all(before[i] is NO_OUTPUT for i in ids & set(before)):
        return f"{name} recorded no output of {code}'s cases"
    found = sum(before.get(i, NO_OUTPUT) is not NO_OUTPUT for i in ids)
    return f"{name} has an output for {found} of {code}'s {len(ids)} cases"


class PairwiseItem(CaseItem):
    """One case of a pairwise benchmark: its output against its baseline output."""

    pairwise_mode = True  # how the judging service tells these items apart, without importing them

    def __init__(self, *, baseline: Baseline | None, setup: PairwiseSetup, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.baseline = baseline
        self.setup_of_benchmark = setup
        self.pair: PairResult | None = None

    def pair_requests(self, candidate_output: Any) -> tuple[PairwiseRequest, PairwiseRequest]:
        assert self.baseline is not None
        parent: BenchmarkNode = self.parent  # type: ignore[assignment]
        style = run_host(self.config).prompt_style(self.benchmark)
        return compile_both_orders(
            self.benchmark, parent.sections, self.case, candidate_output, self.baseline.output, style
        )

    def setup(self) -> None:
        state = run_host(self.config)
        self.pair = state.pairwise(self)
        produced, _ = state.produced(self.nodeid)
        if produced is not None:  # reports show the produced output
            self.produced = produced
            update = {"candidate_output": produced.output}
            self.case = replace(self.case, spec=self.case.spec.model_copy(update=update))
        if self.pair.unpaired:
            where = "no baseline_output, and no output of it in the --llmjudge-baseline run"
            raise pytest.skip.Exception(f"unpaired: {where}: never judged", _use_item_location=True)
        failure = self.pair.failure
        if failure is not None:
            attempts = sum(s.attempts for o in self.pair.orders for s in o.samples)
            self.outcome = Outcome(None, failure, self.pair.model, False, attempts)
            raise JudgeErrored(self.outcome)

    def runtest(self) -> None:
        assert self.pair is not None
        if self.pair.outcome == "loss":
            raise PairLost(self.pair)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, PairLost):
            return loss_report(self.benchmark, self.case, excinfo.value.result)
        return super().repr_failure(excinfo)


def pairwise_case_items(
    node: BenchmarkNode, requests: dict[str, CompiledRequest], style: str
) -> tuple[dict[str, CompiledRequest | PairwiseRequest], list[pytest.Item]] | None:
    """The requests a pairwise benchmark's prompt snapshot shows, and its case items; None when
    the benchmark is judged case by case."""
    setup = pairwise_setup(node, requests, style)
    if setup is None:
        return None
    items: list[pytest.Item] = [
        PairwiseItem.from_parent(
            node,
            name=case.id,
            case=case,
            request=requests[case.id],
            baseline=setup.baselines[case.id],
            setup=setup,
        )
        for case in node.benchmark.cases
    ]
    return setup.prompt_requests, items


def with_pairwise(item: PairwiseItem, record: CaseRecord) -> CaseRecord:
    """A pairwise case's record: its comparison, the calls both orders made, the pairwise judge."""
    result = item.pair
    own = item.benchmark.spec.judge
    pairwise = PairwiseRecord(
        outcome=None,
        unpaired=item.baseline is None,
        baseline_output=item.baseline.output if item.baseline else None,
        baseline_source=item.baseline.source if item.baseline else None,
        baseline_only=item.setup_of_benchmark.baseline_only,
        gate=item.benchmark.spec.pairwise_gate,
        min_consistency=own.min_consistency if own else None,
        baseline_note=item.setup_of_benchmark.baseline_note,
    )
    if result is None:
        return replace(record, pairwise=pairwise, judge_pass=None, case_label=None)
    answers = tuple(_answer(order) for order in result.orders)
    pairwise = replace(
        pairwise,
        outcome=result.outcome,
        identical=result.identical,
        consistent=result.consistent,
        answers=answers,
    )
    calls = sum(a.calls for a in answers)
    first = result.orders[0].request if result.orders else None
    return replace(
        record,
        pairwise=pairwise,
        judge_pass=None,
        case_label=None,
        reason=_pairwise_reason(result, answers, record.reason),
        model=result.model,
        prompt_hash=first.digest if first else record.prompt_hash,
        cached=bool(answers) and all(a.cached for a in answers),
        attempts=1 if calls else 0,  # ``Stats`` counts a record's calls as its requests then
        requests=calls,
        retried=tuple(kind for o in result.orders for s in o.samples for kind in s.retried),
        input_tokens=sum(a.input_tokens for a in answers),
        output_tokens=sum(a.output_tokens for a in answers),
        cost_usd=_total([record.cost_usd, *(a.cost_usd for a in answers)]),  # with its task's, if any
        judge=_pairwise_judge(record.judge, result.model, first),
        panel=pair_panel(result),
        usage_estimated=sum(s.usage.estimated for o in result.orders for s in o.samples if not s.cached),
        usage_implausible=sum(s.usage.implausible for o in result.orders for s in o.samples if not s.cached),
    )


def _pairwise_judge(judge: JudgeFacts | None, model: str, first: PairwiseRequest | None) -> JudgeFacts | None:
    """The judge facts of a pairwise case: the pairwise judge's instructions and fingerprint."""
    from ..suite.hashing import digest

    if judge is None or first is None:
        return judge
    instructions = digest([first.instructions, first.system_prompt, first.rubric, first.prompt_style])
    settings = judge.fingerprint.settings if judge.fingerprint else {}
    fingerprint = JudgeFingerprint(model, settings, instructions, digest([model, settings, instructions]))
    return replace(judge, fingerprint=fingerprint, instructions=first.instructions, rubric=first.rubric)


def _pairwise_reason(result: PairResult, answers: tuple[PairAnswerRecord, ...], own: str) -> str:
    """Why a pairwise case has its outcome: each order's winner and reason."""
    if result.identical:
        return "identical outputs: a tie without a judge call"
    if result.outcome is None:
        return own
    if result.panel is not None:
        from ..gating.panel import pair_panel_reason

        members = [
            (m.model, m.outcome, _said(m), str(m.failure) if m.failure else None) for m in result.members
        ]
        return pair_panel_reason(members, result.outcome, result.panel.rule)
    said = " / ".join(f"candidate {a.candidate_position}: {a.winner} — {a.reason}" for a in answers)
    return f"{result.outcome}: {said}"


def _said(result: PairResult) -> str:
    """What one judge answered in each order: ``candidate A: A — reason / candidate B: …``."""
    return " / ".join(
        f"candidate {o.request.candidate_position}: {o.answer.winner} — {o.answer.reason}"
        for o in result.orders
        if o.answer is not None
    )


def pair_panel(result: PairResult) -> PanelRecord | None:
    """A pairwise panel case's panel: each member's outcome and answers, the vote's decision."""
    from ..gating.panel import pair_decision, pair_split

    if result.panel is None:
        return None
    members = []
    for member in result.members:
        answers = [_answer(order) for order in member.orders]
        members.append(
            MemberRecord(
                member.model,
                None if member.outcome is None else member.outcome != "loss",
                _said(member),
                str(member.failure) if member.failure is not None else None,
                bool(answers) and all(a.cached for a in answers),
                max((len(o.samples) for o in member.orders), default=1),
                sum(a.input_tokens for a in answers),
                sum(a.output_tokens for a in answers),
                _total([a.cost_usd for a in answers]),
                outcome=member.outcome,
            )
        )
    decision = pair_decision(result.outcome)
    split = pair_split([m.outcome for m in members])
    return PanelRecord(result.panel.rule, result.panel.min_members, decision, split, tuple(members))


def _total(costs: list[float | None]) -> float | None:
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def _answer(order: OrderAnswer) -> PairAnswerRecord:
    answer = order.answer
    samples = order.samples
    latencies = [s.latency for s in samples if s.latency is not None]
    costs = [s.usage.spent for s in samples if not s.cached]
    return PairAnswerRecord(
        order=order.order,
        candidate_position=order.request.candidate_position,
        winner=answer.winner if answer else None,
        reason=answer.reason if answer else "",
        request_digest=order.request.digest,
        sample_winners=tuple(s.pairwise.winner if s.pairwise else None for s in samples),
        cached=all(s.cached for s in samples),
        calls=sum(max(s.attempts - 1, 0) + max(s.usage.requests, 1 if s.attempts else 0) for s in samples),
        input_tokens=sum(s.usage.input_tokens for s in samples),
        output_tokens=sum(s.usage.output_tokens for s in samples),
        latency_s=sum(latencies) if latencies else None,
        error=str(order.failure) if order.failure else None,
        cost_usd=None if any(c is None for c in costs) else float(sum(c for c in costs if c is not None)),
    )
