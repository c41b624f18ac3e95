"""Cost: the run's ``--llmjudge-price`` values checked when it starts, its budget opened (one for
all xdist workers: the controller serves it), and ``--llmjudge-estimate``, which prints what the
run would cost instead of running its cases."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from .selection import is_worker

if TYPE_CHECKING:
    from ..pipeline.service import JudgingService
    from ..suite.settings import RunSettings
    from .host import Host

Lines = list[tuple[str, dict[str, bool]]]


def start_cost(config: pytest.Config, settings: RunSettings, host: Host) -> None:
    """Check the prices given; with ``--llmjudge-estimate`` estimate instead of running; else open
    the budget, if any: this process's own, or an xdist controller's for all its workers."""
    from ..cost.spending import price_overrides

    try:
        price_overrides(settings.price)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    service: JudgingService = host.service
    if config.getoption("llmjudge_estimate", None):
        # In one process: an estimate calls nothing, and xdist's workers would have nothing to run.
        config.option.numprocesses, config.option.dist, config.option.tx = 0, "no", []
        service.estimating = True  # schedules nothing, whichever plugin asks
        config.pluginmanager.register(EstimatePlugin(service), "llmjudge-estimate")
        return
    controller = bool(config.getoption("numprocesses", None))
    service.spending.open("worker" if is_worker(config) else "controller" if controller else "single")


class EstimatePlugin:
    """``--llmjudge-estimate``: the run's calls, tokens and cost, printed instead of its cases."""

    def __init__(self, service: JudgingService) -> None:
        self.service = service
        self.lines: Lines = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        if session.config.option.collectonly:
            return None
        self.lines = estimate_lines(self.service, session.items)
        return True  # no item runs: an estimate makes no model call

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.lines:
            return
        terminalreporter.section("llmjudge estimate")
        for line, markup in self.lines:
            terminalreporter.write_line(line, **markup)


def estimate_lines(service: JudgingService, items: list[pytest.Item]) -> Lines:
    """The estimate of ``items``' benchmarks, one line each, then the total and the prices used."""
    from ..cost.pricing import unpriced_message
    from ..cost.tokens import ModelTokens
    from ..gating.estimate import BenchmarkEstimate, Miss, describe_total, estimate_benchmark
    from ..pipeline.estimating import plan_calls
    from .nodes import CaseItem

    plans, problems = plan_calls(service, [item for item in items if isinstance(item, CaseItem)])

    def estimates(batch: bool) -> list[BenchmarkEstimate]:
        """Each benchmark's estimate, its judge calls at the batch rate with ``batch``."""
        judged = []
        for plan in plans:
            judge = plan.judge_tokens or ModelTokens(None)
            if batch and judge.price is not None:
                judge = replace(judge, price=replace(judge.price, batch=True))
            misses = [Miss(text, samples) for text, samples in plan.misses]
            requests, task = plan.task_requests, plan.task_tokens
            judged.append(
                estimate_benchmark(plan.benchmark, misses, judge, task_requests=requests, task=task)
            )
        return judged

    live = estimates(batch=False)
    lines: Lines = [("calls the caches cannot answer (no model was called):", {})]
    lines += [(f"  {estimate.describe()}", {}) for estimate in live]
    lines.append((describe_total(live), {"bold": True}))
    if service.settings.batch != "off":  # the judge's calls through the provider's batch API
        total = describe_total(estimates(batch=True)).removeprefix("total: ")
        lines.append((f"total at the batch rate (--llmjudge-batch): {total}", {"bold": True}))
    cached = sum(plan.cached for plan in plans)
    if cached:
        lines.append((f"{cached} judge sample(s) are in the verdict cache: no call", {}))
    prices = {plan.judge: plan.judge_tokens.price for plan in plans if plan.judge_tokens and plan.misses}
    prices |= {plan.task: plan.task_tokens.price for plan in plans if plan.task_tokens and plan.task_requests}
    for model, price in prices.items():
        if price is None:
            lines.append((unpriced_message(model), {"yellow": True}))
        else:
            lines.append((f"price of {model}: {price.describe()}", {}))
    lines += [(problem, {"yellow": True}) for problem in problems]
    return lines
