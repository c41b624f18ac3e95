"""``[tool.llmjudge.lint]`` in pyproject.toml: which rules run, on which files.

```toml
[tool.llmjudge.lint]
select = ["LJ0"]                 # codes, prefixes or rule names; default: every rule
ignore = ["LJ014"]
exclude = ["tests/lint/corpus"]  # globs or folders, relative to the pyproject's folder
benchmarks = ["benchmarks"]      # where the project's benchmarks live (for LJ032, LJ033)
paths = ["benchmarks", "evaluators"]   # what `llmjudge lint` checks when given no paths

[tool.llmjudge.lint.per-file-ignores]
"evaluators/legacy/*.md" = ["LJ010", "LJ011"]
```
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..suite.errors import nearest

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
    benchmarks: tuple[str, ...] = ("benchmarks",)
    paths: tuple[str, ...] = (".",)
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``."""
    here = start.resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_settings(start: Path) -> LintSettings:
    """Settings from the nearest pyproject.toml; defaults rooted at ``start`` when there is none."""
    pyproject = find_pyproject(start)
    if pyproject is None:
        return LintSettings(root=start.resolve())
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{pyproject}: cannot read settings: {exc}") from None
    table = data.get("tool", {}).get("llmjudge", {}).get("lint", {})
    return settings_from_table(table, pyproject.parent, str(pyproject))


def settings_from_table(
    table: dict[str, Any], root: Path, source: str = "[tool.llmjudge.lint]"
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
        benchmarks=_strings(table, "benchmarks", source) if "benchmarks" in table else ("benchmarks",),
        paths=_strings(table, "paths", source) if "paths" in table else (".",),
        per_file_ignores=tuple((glob, _strings(per_file, glob, source)) for glob in per_file),
    )


def _strings(table: dict[str, Any], key: str, source: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{source}: '{key}' must be a list of strings")
    return tuple(value)
