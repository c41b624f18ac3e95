"""The files a suite reads, so that no output of a run replaces one: the benchmark files, the files
they name (cases, calibration, prompt, task template, few-shot examples, output schema), the
rubrics, the compiled-prompt snapshots and pytest's configuration."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .errors import SpecError

# Fields of a benchmark file that name a file it reads (paths from the rootdir), and what it is.
_NAMED = {
    ("cases_file",): "a cases file",
    ("calibration_file",): "a calibration file",
    ("llm_prompt_file",): "a prompt file",
    ("task", "prompt_file"): "a task prompt template",
    ("task", "output_schema"): "a task output schema",
    ("task", "few_shot", "examples_file"): "a few-shot examples file",
}
# Files pytest reads wherever they are (a Python file, conftest.py included, is refused anyway).
CONFIG_NAMES = frozenset({"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"})
SNAPSHOT_SUFFIX = ".ambr"
BENCHMARK_FILE = "a benchmark file"
_YAML_SUFFIXES = frozenset({".yaml", ".yml"})


def named_files(
    root: Path, sources: Iterable[str], known: Mapping[str, Mapping[Path, str]] | None = None
) -> dict[Path, str]:
    """Resolved path → what it is, for the benchmark files ``sources`` (relative to ``root``) and
    every file they name: from ``known`` (the run's collection) for a file it holds, else read
    now. A benchmark file that no longer reads names nothing."""
    from .files import read_yaml

    found: dict[Path, str] = {}
    for source in sorted(set(sources)):
        named = (known or {}).get(source)
        if named is None:
            try:
                data = read_yaml(root / source, source).data
            except (SpecError, OSError, ValueError):
                data = None
            named = files_named(root, source, data)
        for path, what in named.items():
            if what == BENCHMARK_FILE:
                found[path] = what
            else:
                found.setdefault(path, what)
    return found


def files_named(root: Path, source: str, data: Any) -> dict[Path, str]:
    """The benchmark file ``source`` and the files its ``data`` names (the file's YAML mapping, or
    its loaded spec), resolved path → what it is."""
    found = {_real(root / source): BENCHMARK_FILE}
    for keys, what in _NAMED.items():
        value = _field(data, keys)
        if isinstance(value, str) and value and "\x00" not in value:
            found.setdefault(_real(root / value), what)
    return found


def what_it_is(target: Path, *, ini: Path | None, rubrics: Path, named: Mapping[Path, str]) -> str | None:
    """What the resolved ``target`` is to the suite (a snapshot, pytest's configuration, a rubric,
    one of the ``named`` files), or None when the suite does not read it."""
    if target in named:
        return named[target]
    if target.suffix == SNAPSHOT_SUFFIX:
        return "a compiled-prompt snapshot"
    if target.name in CONFIG_NAMES or (ini is not None and target == _real(ini)):
        return "a pytest configuration file"
    if target.suffix in _YAML_SUFFIXES and target.is_relative_to(_real(rubrics)):
        return "a rubric file"
    return None


def _field(data: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else getattr(data, key, None)
    return data


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))
