"""The rubric files of a run, loaded once: their specs for the gates, and the errors of those
that do not load or name benchmarks that do not exist, as collection errors."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

_NOT_SUITE = {"node_modules", "site-packages", "venv"}


@dataclass(frozen=True)
class RubricFiles:
    specs: tuple[Any, ...] = ()  # suite.files.RubricSpec of each rubric file that loads
    errors: tuple[tuple[str, str], ...] = ()  # (display path, error) of the others and bad references
    members: dict[str, list[str]] = field(default_factory=dict)  # rubric code -> its benchmarks


def load_rubric_files(
    config: pytest.Config, codes: set[str], parent_rubrics: dict[str, tuple[str, Any]]
) -> RubricFiles:
    """The run's rubrics (ini ``llmjudge_rubrics``); files that do not load, and references to
    benchmarks or rubrics that do not exist, are errors."""
    from ..gating.gates import reference_errors
    from ..suite.errors import SpecError, display_path
    from ..suite.files import load_rubric

    folder = config.rootpath / str(config.getini("llmjudge_rubrics"))
    rubrics, errors = [], []
    for path in sorted(folder.rglob("*.y*ml")) if folder.is_dir() else []:
        display = display_path(path, config.rootpath)
        try:
            rubrics.append(load_rubric(path, display))
        except SpecError as error:
            errors.append((display, error.render()))
    listed = {member for rubric in rubrics for member in rubric.spec.benchmarks}
    if not listed <= codes:  # only then read the benchmark files this run did not collect
        codes = suite_codes(config) | codes
    errors += [(e.location.path, e.render()) for e in reference_errors(rubrics, codes, parent_rubrics)]
    members = {r.spec.code: list(r.spec.benchmarks) for r in rubrics}
    return RubricFiles(tuple(r.spec for r in rubrics), tuple(errors), members)


def report_errors(config: pytest.Config, rubrics: RubricFiles) -> None:
    """Each rubric error as a collection error of its file (``ERROR collecting <file>``)."""
    for path, text in rubrics.errors:
        config.hook.pytest_collectreport(report=pytest.CollectReport(path, "failed", text, []))


def suite_codes(config: pytest.Config) -> set[str]:
    """The codes of every benchmark file below the rootdir's benchmark folders (a rubric may list
    benchmarks this run did not collect); a file that does not load is left to its own run."""
    from ..suite.detect import is_benchmark_file
    from ..suite.errors import SpecError
    from ..suite.files import read_yaml

    folders = list(config.getini("llmjudge_paths"))
    codes = set()
    for top, dirs, names in os.walk(config.rootpath):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_")) and d not in _NOT_SUITE]
        for name in names:
            path = Path(top) / name
            if not is_benchmark_file(path, folders, config.rootpath):
                continue
            try:
                data = read_yaml(path, name).data
            except SpecError:
                continue
            code = data.get("code") if isinstance(data, dict) else None
            codes.add(str(code) if code is not None else path.stem)
    return codes
