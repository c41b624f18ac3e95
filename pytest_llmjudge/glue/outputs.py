"""Where a run's output files go, what they may not replace, and the review file's write.

A relative path given on the command line or in the environment is taken from the directory
pytest was run in (as ``--junitxml`` is); one from the ini file, and the defaults, from the rootdir.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from ..suite.settings import env_variable

if TYPE_CHECKING:
    from ..gating.records import CaseRecord
    from ..suite.safe_write import Guard
    from ..suite.settings import RunSettings

OVERWRITE_FLAG = "--llmjudge-overwrite"


class RunState(Protocol):
    """What this module reads of the run state."""

    @property
    def config(self) -> pytest.Config: ...
    @property
    def settings(self) -> RunSettings: ...
    @property
    def records(self) -> list[CaseRecord]: ...


def output_path(config: pytest.Config, name: str, value: str) -> Path:
    """Where the path setting ``name`` (results, html, review_file; baseline) of ``value`` is:
    from the command line or the environment, relative to where pytest ran; else the rootdir."""
    given = config.getoption(f"llmjudge_{name}") is not None or bool(os.environ.get(env_variable(name)))
    return (config.invocation_params.dir if given else config.rootpath) / value


def output_guard(config: pytest.Config, settings: RunSettings, path: Path) -> Guard:
    """What the output at ``path`` must not replace, unless ``--llmjudge-overwrite``: a Python file,
    a benchmark file (what pytest_collect_file collects) and the baseline results file."""
    from ..suite.detect import is_benchmark_file
    from ..suite.safe_write import Guard

    root = config.rootpath
    target = path.resolve()
    protected = {}
    if is_benchmark_file(target, list(config.getini("llmjudge_paths")), root):
        protected[target] = "a benchmark file"
    if settings.baseline:
        # wherever the baseline is read from: the rootdir or the directory pytest was run in
        for folder in (root, config.invocation_params.dir):
            protected.setdefault((folder / settings.baseline).resolve(), "the baseline results file")
    return Guard(protected, OVERWRITE_FLAG, settings.overwrite)


WRITE_ERRORS = pytest.StashKey[list[str]]()


def write_errors(config: pytest.Config) -> list[str]:
    """The "cannot write" lines of the review file, for the terminal summary."""
    return config.stash.setdefault(WRITE_ERRORS, [])


def write_review(state: RunState) -> None:
    """Update the review file; one that cannot be written is a red summary line, not a crash."""
    from ..reporting.review import write_review_file

    path = output_path(state.config, "review_file", state.settings.review_file)
    guard = output_guard(state.config, state.settings, path)
    try:
        write_review_file(path, state.records, guard)
    except OSError as error:
        write_errors(state.config).append(f"--llmjudge-review-file: cannot write {path}: {error}")
