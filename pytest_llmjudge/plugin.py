"""pytest hooks and options. Each hook hands off to the run's plugins (``glue.host``) or ``glue.nodes``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal

import pytest

from . import hookspecs
from .glue import setup
from .glue.stash import STATE
from .suite.detect import is_benchmark_file
from .suite.settings import DEFAULTS, env_variable
from .suite.vocabulary import CACHE_MODES

# Output paths: see glue.outputs.output_path.
_RELATIVE = (
    "a relative path is from the directory pytest runs in (from the ini file, and the default: the rootdir)"
)
_HELP = {
    "model": "judge model: a pydantic-ai model string (openai:gpt-4o, anthropic:…, ollama:…) or 'local'",
    "base_url": "OpenAI-compatible server URL for the judge model (vLLM, Ollama, llama.cpp)",
    "temperature": "judge temperature",
    "max_tokens": "maximum tokens in a judge answer",
    "timeout": "seconds one judge call may take before it is retried",
    "prompt_style": "judge output style: no_reasoning, short_cot or long_cot",
    "concurrency": "judge calls in flight at once",
    "rpm": "at most this many judge requests start per minute (default: no limit)",
    "attempts": "attempts per judge call for transient failures",
    "cache": f"verdict cache mode: {', '.join(CACHE_MODES)}",
    "cache_path": "verdict cache file",
    "review_file": "JSON file listing cases that need human review; " + _RELATIVE,
    "repeats": "judge each case this many times (a benchmark's judge.repeats wins)",
    "reduce": "how a case's samples become its verdict: majority (ties fail), all, any or mean",
    "gate": "gate rule: point (pass rate reaches the threshold), lower_bound (its 95% interval does), "
    "corrected or corrected_lower_bound (the same for the rate corrected by the judge's calibration)",
    "results": "results file of the run; " + _RELATIVE + " (default .llmjudge/runs/<UTC time>-<digest>.json)",
    "html": "also write the run's HTML report to this path; " + _RELATIVE,
    "baseline": "results file of an earlier run to compare this run with, case by case; " + _RELATIVE,
    "margin": "smallest pass-rate change the baseline comparison must be able to detect",
    "alpha": "significance level of the baseline comparison (Holm-adjusted across benchmarks)",
    "fail_on": "'regression': a significant regression against the baseline fails its benchmark's gate; "
    "'worse': in pairwise mode, a candidate significantly worse than the baseline does",
    "min_tpr": "judge trust: least share of human-pass cases the judge must pass (judge.min_tpr wins)",
    "min_tnr": "judge trust: least share of human-fail cases the judge must fail (judge.min_tnr wins)",
    "min_labels": "judge trust: least number of human-labelled cases (judge.min_labels wins)",
    "max_response_bytes": "largest judge HTTP response read, in bytes after decompression; a larger one "
    "ends its case as an ERROR",
    "task": "task producing the outputs of cases that have none: a Python callable 'package.module:function' "
    "(a benchmark's own task: wins)",
    "task_model": "replaces the model of every model task (task: {model: ...}): the same suite runs "
    "the current release and the candidate",
    "task_base_url": "OpenAI-compatible server URL for every model task: --llmjudge-task-model's, "
    "else each task's own model",
    "task_concurrency": "task calls in flight at once (batched model-task calls under --llmjudge-batch "
    "all wait in one batch instead)",
    "task_timeout": "seconds one task call may take before its case is an ERROR",
    "task_cache": "produced-output cache: on, off or replay (never runs a task; a miss is an ERROR); "
    "replay under --llmjudge-cache=replay unless set",
    "price": "price of a model genai-prices does not list (self-hosted, resold): MODEL=IN/OUT in USD per "
    "million input/output tokens; repeat the option, or give several (one a line, or comma-separated)",
    "budget": "USD the run may spend on model calls: past it no call starts, and the cases left are ERRORs",
    "budget_tokens": "input plus output tokens the run may use: past it no call starts",
    "panel": "a panel of judges for benchmarks without their own judge.model or judge.panel: model "
    "strings, comma-separated or repeated, each MODEL or MODEL@BASE_URL (its own server); each "
    "case is judged by every member and the panel votes",
    "panel_rule": "how a panel's verdicts become one: majority (an even split is uncertain and fails), "
    "unanimous or any (a benchmark's judge.panel_rule wins)",
    "judge_process": "on: a judge served at a base URL (--llmjudge-base-url, judge.base_url, a model "
    "task's) is called from a process of its own, so its HTTP work does not wait for the run's "
    "(and the run's for it), and from a second one once its server closes each connection; off: "
    "from the pytest process",
    "batch_wait": "how long a --llmjudge-batch=on or collect run waits for its batches: seconds, or "
    "with s, m, h or d; the cases still pending then are ERRORs, their batches kept",
}
# Options given more than once (their ini values: one a line).
_REPEATED = {"price", "panel"}


# Switches that are also ini values: (help, ini help).
_SWITCHES = {
    "allow_outside_root": (
        "let llm_prompt_file, cases_file and calibration_file name files outside the rootdir "
        "(they are sent to the judge)",
        "let benchmark files name files outside the rootdir (true/false)",
    ),
    "overwrite": (
        "let --llmjudge-results, --llmjudge-html and --llmjudge-review-file write over a Python "
        "file, a benchmark file or the baseline results file (refused otherwise)",
        "let output files write over sources (see --llmjudge-overwrite)",
    ),
    "regenerate": (
        "run the task also for cases that have a candidate_output (their stored output is not judged)",
        "run tasks for every case (see --llmjudge-regenerate)",
    ),
    "pairwise": (
        "judge each llm_judge case's output against its baseline output (the case's baseline_output, "
        "else the --llmjudge-baseline run's), in both orders",
        "pairwise mode (see --llmjudge-pairwise)",
    ),
    "rejudge_stale": (
        "judge again, with this run's judge, the cached verdicts of a benchmark that another "
        "resolved judge snapshot gave (the new verdicts are cached), so each gate rests on one judge; "
        "without it such a benchmark is marked 'mixed judges'",
        "re-judge cached verdicts of another judge snapshot (see --llmjudge-rejudge-stale)",
    ),
    "rejudge_baseline": (
        "judge the --llmjudge-baseline run's stored outputs again with this run's judge (through the "
        "cache), report how many of its verdicts flipped (the judge's drift), and compare both runs "
        "on this run's judge; implies --llmjudge-rejudge-stale",
        "re-judge the baseline's outputs with this run's judge (see --llmjudge-rejudge-baseline)",
    ),
}


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llmjudge", "LLM-as-a-judge benchmarks (pytest-llmjudge)")
    _add_settings(group, parser)
    _add_switches(group, parser)
    parser.addini(
        "llmjudge_paths",
        "folder names whose benchmark YAML files are collected (default: benchmarks)",
        type="linelist",
        default=["benchmarks"],
    )
    parser.addini(
        "llmjudge_rubrics", "rubric folder, relative to the rootdir (default: rubrics)", default="rubrics"
    )


def _add_settings(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    """One option and one ini value per run setting of ``_HELP``, its default in its help."""
    for name, text in _HELP.items():
        default = getattr(DEFAULTS, name)
        if default not in (None, ()):
            text = (
                f"{text} (default {default:g})"
                if isinstance(default, float)
                else f"{text} (default {default})"
            )
        flag = f"--llmjudge-{name.replace('_', '-')}"
        group.addoption(
            # argparse %-formats help texts: "95% interval" would end --help with a TypeError
            flag,
            dest=f"llmjudge_{name}",
            default=None,
            help=f"{text}. Env {env_variable(name)}.".replace("%", "%%"),
            action="append" if name in _REPEATED else "store",
        )
        kind: Literal["linelist"] | None = "linelist" if name in _REPEATED else None
        parser.addini(f"llmjudge_{name}", text, type=kind, default=None)


def _add_switches(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    """The switches: each of ``_SWITCHES`` also an ini value, then lint, estimate and CI."""
    for name, (text, ini_text) in _SWITCHES.items():
        group.addoption(
            f"--llmjudge-{name.replace('_', '-')}",
            action="store_const",
            const=True,
            dest=f"llmjudge_{name}",
            default=None,
            help=f"{text}. Env {env_variable(name)}.",
        )
        parser.addini(f"llmjudge_{name}", ini_text, default=None)
    group.addoption(
        "--llmjudge-lint",
        action=argparse.BooleanOptionalAction,
        dest="llmjudge_lint",
        default=None,
        help="lint prompt, benchmark and template files as items; lint errors fail them. Env LLMJUDGE_LINT.",
    )
    parser.addini("llmjudge_lint", "add lint items (see --llmjudge-lint)", type="bool", default=False)
    group.addoption(
        "--llmjudge-batch",
        nargs="?",
        const="on",
        dest="llmjudge_batch",
        default=None,
        metavar="on|submit|collect|off",
        help="send judge calls through the provider's batch API (half price, up to a day): on (the run "
        "waits), submit (submit and end; nothing is decided), collect (collect what a submit run "
        "submitted), off. Env LLMJUDGE_BATCH.",
    )
    parser.addini("llmjudge_batch", "judge calls through the provider's batch API (see --llmjudge-batch)")
    group.addoption(
        "--llmjudge-estimate",
        action="store_true",
        dest="llmjudge_estimate",
        default=None,
        help="print what the run would cost per benchmark (calls, tokens, USD) instead of running its "
        "cases: collects and reads the caches, calls no model, exits 0",
    )
    group.addoption(
        "--llmjudge-ci",
        action="store_true",
        dest="llmjudge_ci",
        default=None,
        help="run as in CI: a benchmark whose prompt snapshot does not exist yet fails instead of "
        "recording it. Also on when the CI environment variable is set (not empty, false or 0).",
    )


def pytest_configure(config: pytest.Config) -> None:
    """One step per concern (``glue.setup``), in the order they depend on one another."""
    settings = setup.run_settings(config)
    setup.check_outputs(config, settings)
    host = setup.open_run(config, settings)
    setup.start_cost_control(config, settings, host)  # before the workers: an estimate turns xdist off
    setup.share_with_workers(config, settings, host)
    setup.start_judge_process(config, settings, host)
    setup.add_lint_items(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    if is_benchmark_file(file_path, parent.config.getini("llmjudge_paths"), parent.config.rootpath):
        from .glue.nodes import BenchmarkFile  # pydantic and jinja2 load only when a benchmark exists

        return BenchmarkFile.from_parent(parent, path=file_path)
    return None


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()
