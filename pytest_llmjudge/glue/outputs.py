"""Where a run's output files go, what they may not replace, and the review file's write.

An output path that names something other than a regular file (a device, a FIFO, a link to one)
is a usage error before the run starts; one that names a file the suite reads is refused when
the output is written, as a red summary line.

A relative path given on the command line or in the environment is taken from the directory
pytest was run in (as ``--junitxml`` is); one from the ini file, and the defaults, from the rootdir.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
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
    @property
    def benchmark_files(self) -> set[str]: ...
    @property
    def named_files(self) -> dict[str, dict[Path, str]]: ...


# Options naming a file the run writes (its results, HTML report and review file).
OUTPUT_OPTIONS = ("results", "html", "review_file")


def output_path(config: pytest.Config, name: str, value: str) -> Path:
    """Where the path setting ``name`` (results, html, review_file; baseline) of ``value`` is:
    from the command line or the environment, relative to where pytest ran; else the rootdir."""
    given = config.getoption(f"llmjudge_{name}") is not None or bool(os.environ.get(env_variable(name)))
    return (config.invocation_params.dir if given else config.rootpath) / value


def check_output_paths(config: pytest.Config, settings: RunSettings) -> None:
    """Refuse, before anything runs, an output that would replace something other than a regular
    file (writing renames a new file over it), and a verdict cache whose folder cannot be made."""
    from ..suite.safe_write import blocking_file, special_kind

    for name in OUTPUT_OPTIONS:
        value = getattr(settings, name)
        if not value:
            continue
        path = output_path(config, name, value)
        kind = special_kind(path)
        if kind is not None:
            flag = f"--llmjudge-{name.replace('_', '-')}"
            raise pytest.UsageError(f"{flag}: {path} is {kind}, not a regular file: name a file to write")
    if settings.cache in ("off", "replay"):  # no cache, or one never created
        return
    cache = config.rootpath / settings.cache_path
    kind = special_kind(cache)
    blocking = blocking_file(cache.parent)
    if kind is not None:
        problem = f"{cache} is {kind}, not a cache file (point --llmjudge-cache-path to a file)"
    elif blocking is not None:
        problem = (
            f"cannot make the folder of {cache}: {blocking} is a file, not a folder "
            "(move the file away, or point --llmjudge-cache-path elsewhere)"
        )
    else:
        return
    raise pytest.UsageError(f"--llmjudge-cache-path: {problem}")


def output_guard(
    config: pytest.Config,
    settings: RunSettings,
    path: Path,
    sources: Iterable[str] = (),
    known: Mapping[str, Mapping[Path, str]] | None = None,
) -> Guard:
    """What the output at ``path`` must not replace, unless ``--llmjudge-overwrite``: a Python file,
    a file the suite reads (a benchmark file, a file one names, from the benchmark files
    ``sources``, a rubric, a snapshot, pytest's configuration), the verdict cache and the baseline
    results file. ``known``: the files each benchmark file collected in this run names."""
    from ..suite.detect import is_benchmark_file
    from ..suite.read_files import named_files, what_it_is
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
    if path.is_file() and target not in protected:  # the suite's files are looked up only then
        rubrics = root / str(config.getini("llmjudge_rubrics"))
        what = what_it_is(
            target, ini=config.inipath, rubrics=rubrics, named=named_files(root, sources, known)
        )
        if target == (root / settings.cache_path).resolve():
            what = "the verdict cache"
        if what is not None:
            protected[target] = what
    return Guard(protected, OVERWRITE_FLAG, settings.overwrite)


def benchmark_sources(state: RunState) -> set[str]:
    """The benchmark files of the run, relative to the rootdir: those collected here, and those of
    the records (an xdist controller collects none)."""
    return {*state.benchmark_files, *(r.nodeid.split("::")[0] for r in state.records)}


WRITE_ERRORS = pytest.StashKey[list[str]]()


def write_errors(config: pytest.Config) -> list[str]:
    """The "cannot write" lines of the review file, for the terminal summary."""
    return config.stash.setdefault(WRITE_ERRORS, [])


def write_review(state: RunState) -> None:
    """Update the review file; one that cannot be written is a red summary line, not a crash."""
    from ..reporting.review import write_review_file

    path = output_path(state.config, "review_file", state.settings.review_file)
    guard = output_guard(state.config, state.settings, path, benchmark_sources(state), state.named_files)
    try:
        write_review_file(path, state.records, guard)
    except OSError as error:
        write_errors(state.config).append(f"--llmjudge-review-file: cannot write {path}: {error}")
