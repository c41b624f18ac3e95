"""pytest hooks and options. Each hook hands off to ``session.RunState`` or ``collect``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import hookspecs
from .detect import is_benchmark_file
from .session import STATE, RunState
from .settings import CACHE_MODES, resolve

_HELP = {
    "model": "judge model: a pydantic-ai model string (openai:gpt-4o, anthropic:…, ollama:…) or 'local'",
    "base_url": "OpenAI-compatible server URL for the judge model (vLLM, Ollama, llama.cpp)",
    "temperature": "judge temperature (default 0)",
    "max_tokens": "maximum tokens in a judge answer",
    "timeout": "seconds one judge call may take before it is retried (default 60)",
    "prompt_style": "judge output style: no_reasoning (default), short_cot or long_cot",
    "concurrency": "judge calls in flight at once (default 16)",
    "rpm": "at most this many judge requests start per minute (default: no limit)",
    "attempts": "attempts per judge call for transient failures (default 4)",
    "cache": f"verdict cache mode: {', '.join(CACHE_MODES)} (default use)",
    "cache_path": "verdict cache file (default .llmjudge/cache.sqlite)",
    "review_file": "JSON file listing cases that need human review (default .llmjudge/review.json)",
}


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llmjudge", "LLM-as-a-judge benchmarks (pytest-llmjudge)")
    for name, text in _HELP.items():
        flag = f"--llmjudge-{name.replace('_', '-')}"
        group.addoption(
            flag, dest=f"llmjudge_{name}", default=None, help=f"{text}. Env LLMJUDGE_{name.upper()}."
        )
        parser.addini(f"llmjudge_{name}", text, default=None)
    group.addoption(
        "--llmjudge-lint",
        action="store_true",
        dest="llmjudge_lint",
        default=False,
        help="add a lint item per prompt, benchmark and template file; lint errors fail it",
    )
    parser.addini(
        "llmjudge_paths",
        "folder names whose benchmark YAML files are collected (default: benchmarks)",
        type="linelist",
        default=["benchmarks"],
    )
    parser.addini(
        "llmjudge_rubrics", "rubric folder, relative to the rootdir (default: rubrics)", default="rubrics"
    )


def pytest_configure(config: pytest.Config) -> None:
    try:
        settings = resolve(
            lambda n: config.getoption(f"llmjudge_{n}"), lambda n: config.getini(f"llmjudge_{n}")
        )
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    state = RunState(config, settings)
    config.stash[STATE] = state
    config.pluginmanager.register(state, "llmjudge-session")
    model = settings.model or ""
    if model.split(":", 1)[0] == "local" and config.getoption("numprocesses", None):
        # The xdist controller starts the local judge before workers exist; they inherit its URL.
        state.local_model(model)
    if config.getoption("llmjudge_lint"):
        from .lint.pytest_items import LintPlugin

        config.pluginmanager.register(LintPlugin(), "llmjudge-lint")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    if is_benchmark_file(file_path, parent.config.getini("llmjudge_paths"), parent.config.rootpath):
        from .collect import BenchmarkFile  # pydantic and jinja2 load only when a benchmark exists

        return BenchmarkFile.from_parent(parent, path=file_path)
    return None


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()
