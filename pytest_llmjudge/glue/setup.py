"""What ``pytest_configure`` sets up, one concern a function: the run settings, the output paths
and baseline, the run and its plugins, cost (prices, budget, estimate), xdist workers (one local
judge server, one cache check) and lint items. ``plugin.pytest_configure`` composes them in the
order they depend on one another: cost may turn xdist off (an estimate runs in one process)
before the workers are set up.

Each step reads only what it is given and the pytest config, so it can be tried on its own. The
modules a step needs only when its concern is on (cost, model judges, lint) load inside it:
this runs in every pytest run.
"""

from __future__ import annotations

import pytest

from ..suite.settings import RunSettings, process_wanted, resolve
from .host import Host, start_run
from .outputs import check_output_paths
from .run_results import read_baseline, started
from .selection import is_worker
from .stash import STATE


def run_settings(config: pytest.Config) -> RunSettings:
    """The run settings from the options, environment and ini values; a bad one is a usage error."""
    try:
        return resolve(lambda n: config.getoption(f"llmjudge_{n}"), lambda n: config.getini(f"llmjudge_{n}"))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def check_outputs(config: pytest.Config, settings: RunSettings) -> None:
    """In the process that writes the outputs (not an xdist worker): refuse an output path that is
    a device, a FIFO, or a file where a folder must be, and read the baseline, so that an
    unreadable one stops the run before any judging."""
    if is_worker(config):
        return
    check_output_paths(config, settings)
    read_baseline(config, settings)


def open_run(config: pytest.Config, settings: RunSettings) -> Host:
    """The run's start time noted, its plugins registered, and its host stashed for the nodes."""
    started(config)
    host = start_run(config, settings)
    config.stash[STATE] = host
    return host


def cost_wanted(config: pytest.Config, settings: RunSettings) -> bool:
    """Prices given, a USD or token budget, or ``--llmjudge-estimate``."""
    budget = settings.budget is not None or settings.budget_tokens is not None
    return bool(settings.price) or budget or bool(config.getoption("llmjudge_estimate"))


def start_cost_control(config: pytest.Config, settings: RunSettings, host: Host) -> None:
    """Check the prices given, open the budget or start the estimate, when any of them is asked."""
    if not cost_wanted(config, settings):
        return
    from .cost_plugin import start_cost

    start_cost(config, settings, host)


def start_judge_process(config: pytest.Config, settings: RunSettings, host: Host) -> None:
    """A run judged by a model at ``--llmjudge-base-url`` starts its judge process before collecting
    (an xdist controller judges nothing; each worker starts its own; an estimate calls nothing)."""
    estimate = config.getoption("llmjudge_estimate", None)
    if process_wanted(settings) and not (is_controller(config) or config.option.collectonly or estimate):
        host.judging.start_judge_process()


def is_controller(config: pytest.Config) -> bool:
    """An xdist controller: ``-n`` given, and this process is not one of its workers."""
    return bool(config.getoption("numprocesses", None)) and not is_worker(config)


def share_with_workers(config: pytest.Config, settings: RunSettings, host: Host) -> None:
    """On an xdist controller: one local judge for all workers (started when the first of them must
    judge a case), and the verdict cache checked once, an unusable one a usage error here rather
    than a crash in every worker."""
    if not is_controller(config):
        return
    model = settings.model or ""
    if model.split(":", 1)[0] == "local" and settings.cache != "replay":
        host.service.judges.serve_workers(model)
    from ..models.judges import JudgeSetupError

    try:
        host.service.check_cache()
    except JudgeSetupError as exc:
        raise pytest.UsageError(str(exc)) from None


def add_lint_items(config: pytest.Config) -> None:
    """The lint items' plugin, registered when ``--llmjudge-lint`` (or its env or ini form) asks."""
    from .lint_items import LintPlugin, lint_requested

    if lint_requested(config):
        config.pluginmanager.register(LintPlugin(), "llmjudge-lint")
