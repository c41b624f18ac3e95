"""``[tool.llmjudge.lint]`` in the rootdir's pyproject.toml: which rules run, on which files.

The root is pytest's rootdir (``suite.root``), so the linter resolves ``llm_prompt_file`` and
``cases_file`` as pytest does; ``llmjudge_paths`` and ``llmjudge_rubrics`` in pytest's ini file
give the default benchmark and rubric folders.

```toml
[tool.llmjudge.lint]
select = ["LJ0"]                 # codes, prefixes or rule names; default: every rule
ignore = ["LJ014"]
exclude = ["tests/lint/corpus"]  # globs or folders, relative to the pyproject's folder
benchmarks = ["benchmarks"]      # benchmark folders for LJ032, LJ033 (default: ini llmjudge_paths)
paths = ["benchmarks", "evaluators"]   # what `llmjudge lint` checks when given no paths

[tool.llmjudge.lint.per-file-ignores]
"evaluators/legacy/*.md" = ["LJ010", "LJ011"]
```
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..suite.errors import nearest
from ..suite.root import BENCHMARK_PATHS_DEFAULT, RUBRICS_DEFAULT, ProjectRoot, find_root, read_bool

_KEYS = ("select", "ignore", "exclude", "benchmarks", "paths", "per-file-ignores")


class SettingsError(ValueError):
    """A mistake in ``[tool.llmjudge.lint]``."""


@dataclass(frozen=True)
class LintSettings:
    """Lint settings; paths in them are relative to ``root``."""

    root: Path
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    benchmarks: tuple[str, ...] = BENCHMARK_PATHS_DEFAULT
    paths: tuple[str, ...] = (".",)
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    rubrics: str = RUBRICS_DEFAULT  # YAML files below this folder are rubrics, never benchmarks
    allow_outside_root: bool = False  # benchmark files may name files outside the root (as in a run)


def load_settings(start: Path) -> LintSettings:
    """Settings for a run in the folder ``start``, rooted where pytest would root it."""
    return settings_for_root(find_root([start], start))


def settings_for_root(
    root: ProjectRoot, isolated: bool = False, allow_outside_root: bool | None = None
) -> LintSettings:
    """Settings rooted at pytest's rootdir; ``[tool.llmjudge.lint]`` from its pyproject.toml
    unless ``isolated``. ``llmjudge lint`` and ``pytest --llmjudge-lint`` both call this.

    ``allow_outside_root`` None: read as a run reads it, ``LLMJUDGE_ALLOW_OUTSIDE_ROOT`` else the
    ini file's ``llmjudge_allow_outside_root`` (the pytest glue passes the run's value)."""
    pyproject = root.rootdir / "pyproject.toml"
    table: dict[str, Any] = {}
    if not isolated and pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"{pyproject}: cannot read settings: {exc}") from None
        table = data.get("tool", {}).get("llmjudge", {}).get("lint", {})
    settings = settings_from_table(table, root.rootdir, str(pyproject), root)
    if allow_outside_root is None:
        allow_outside_root = _allow_outside_root(root)
    return replace(settings, allow_outside_root=allow_outside_root)


def _allow_outside_root(root: ProjectRoot) -> bool:
    variable = os.environ.get("LLMJUDGE_ALLOW_OUTSIDE_ROOT", "")
    if variable:
        return read_bool(variable, "LLMJUDGE_ALLOW_OUTSIDE_ROOT")
    value = root.ini("llmjudge_allow_outside_root")
    if value is None or value == "":
        return False
    return (
        value
        if isinstance(value, bool)
        else read_bool(str(value), f"{root.inifile}: llmjudge_allow_outside_root")
    )


def settings_from_table(
    table: dict[str, Any],
    root: Path,
    source: str = "[tool.llmjudge.lint]",
    project: ProjectRoot | None = None,
) -> LintSettings:
    for key in table:
        if key not in _KEYS:
            guess = nearest(key, _KEYS)
            hint = f"did you mean '{guess}'?" if guess else f"known keys: {', '.join(_KEYS)}"
            raise SettingsError(f"{source}: unknown key '{key}' in [tool.llmjudge.lint]; {hint}")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise SettingsError(f"{source}: per-file-ignores must be a table of glob = [codes]")
    return LintSettings(
        root=root.resolve(),
        select=_strings(table, "select", source) if "select" in table else None,
        ignore=_strings(table, "ignore", source),
        exclude=_strings(table, "exclude", source),
        benchmarks=_strings(table, "benchmarks", source)
        if "benchmarks" in table
        else (project.benchmark_paths if project else BENCHMARK_PATHS_DEFAULT),
        paths=_strings(table, "paths", source) if "paths" in table else (".",),
        per_file_ignores=tuple((glob, _strings(per_file, glob, source)) for glob in per_file),
        rubrics=project.rubrics if project else RUBRICS_DEFAULT,
    )


def _strings(table: dict[str, Any], key: str, source: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{source}: '{key}' must be a list of strings")
    return tuple(value)
