"""The repository root, found as pytest finds its rootdir, and the plugin's ini settings there.

Paths in benchmark files (``llm_prompt_file``, ``cases_file``) are relative to pytest's rootdir,
so every tool that reads them must agree with pytest on that folder. ``find_root`` follows
pytest's rules (``_pytest/config/findpaths.py``) without importing pytest: the first
configuration file among ``pytest.toml``, ``.pytest.toml``, ``pytest.ini``, ``.pytest.ini``,
``pyproject.toml`` with ``[tool.pytest]`` or ``[tool.pytest.ini_options]``, ``tox.ini`` with
``[pytest]`` and ``setup.cfg`` with ``[tool:pytest]``, looked for in the common ancestor of the
arguments and then its parents; failing that a ``setup.py``, a bare ``pyproject.toml``, or the
common ancestor of the arguments and the current folder. The pytest glue builds the same value
from ``config.rootpath`` and ``config.getini`` with ``root_from_values``.
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCHMARK_PATHS_DEFAULT = ("benchmarks",)
RUBRICS_DEFAULT = "rubrics"


class RootError(ValueError):
    """A configuration file pytest would refuse as well (unreadable, or a section it rejects)."""


@dataclass(frozen=True)
class ProjectRoot:
    """pytest's rootdir, the configuration file it read, and the plugin's settings in it."""

    rootdir: Path
    inifile: Path | None = None
    benchmark_paths: tuple[str, ...] = BENCHMARK_PATHS_DEFAULT  # ini llmjudge_paths
    rubrics: str = RUBRICS_DEFAULT  # ini llmjudge_rubrics
    lint: bool | None = None  # ini llmjudge_lint; None when the file does not set it
    values: Mapping[str, object] = field(default_factory=dict, compare=False)  # the raw ini section

    def ini(self, name: str) -> object:
        """The raw value of ini key ``name`` in the configuration file (None when unset)."""
        return self.values.get(name)


@dataclass(frozen=True)
class _Config:
    """One configuration file's pytest section (a TOML table keeps its values' types)."""

    values: Mapping[str, object]


def find_root(args: Iterable[str | os.PathLike[str]], invocation_dir: Path | None = None) -> ProjectRoot:
    """The root pytest would choose when run in ``invocation_dir`` with ``args`` (no -c, no --rootdir)."""
    invocation = Path(os.path.abspath(invocation_dir or Path.cwd()))
    dirs = _dirs_from_args(args, invocation)
    ancestor = _common_ancestor(invocation, dirs)
    found = _locate_config([ancestor])
    if found is None:
        setup_py = next((d for d in (ancestor, *ancestor.parents) if (d / "setup.py").is_file()), None)
        if setup_py is not None:
            return ProjectRoot(setup_py)
        if dirs != [ancestor]:
            found = _locate_config(dirs)
        if found is None:
            rootdir = _common_ancestor(invocation, [invocation, ancestor])
            return ProjectRoot(ancestor if _is_fs_root(rootdir) else rootdir)
    rootdir, inifile, config = found
    return _from_config(rootdir, inifile, config)


def root_from_values(
    rootdir: Path, inifile: Path | None, getini: Callable[[str], object], lint: bool | None = None
) -> ProjectRoot:
    """The root as pytest resolved it (``config.rootpath``, ``config.inipath``, ``config.getini``)."""
    paths = getini("llmjudge_paths")
    rubrics = getini("llmjudge_rubrics")
    return ProjectRoot(
        rootdir=rootdir,
        inifile=inifile,
        benchmark_paths=tuple(str(p) for p in paths) if isinstance(paths, list) else BENCHMARK_PATHS_DEFAULT,
        rubrics=str(rubrics) if rubrics else RUBRICS_DEFAULT,
        lint=lint,
    )


def read_bool(value: str, source: str) -> bool:
    """A bool ini value read as pytest reads it: ``1/0``, ``true/false``, ``yes/no``, ``on/off``."""
    lowered = value.strip().lower()
    if lowered in {"y", "yes", "t", "true", "on", "1"}:
        return True
    if lowered in {"n", "no", "f", "false", "off", "0"}:
        return False
    raise RootError(f"{source}: cannot read {value!r} as a boolean (use true or false)")


# -- pytest's rootdir rules -------------------------------------------------------------------


def _dirs_from_args(args: Iterable[str | os.PathLike[str]], invocation: Path) -> list[Path]:
    dirs = []
    for arg in args:
        text = os.fspath(arg)
        if text.startswith("-"):
            continue
        path = Path(os.path.abspath(invocation / text.partition("::")[0]))
        try:
            exists = path.exists()
        except (OSError, ValueError):
            exists = False
        if exists:
            dirs.append(path if path.is_dir() else path.parent)
    return dirs


def _common_ancestor(invocation: Path, paths: Sequence[Path]) -> Path:
    common: Path | None = None
    for path in paths:
        if not path.exists():
            continue
        if common is None:
            common = path
        elif common in path.parents or path == common:
            continue
        elif path in common.parents:
            common = path
        else:
            with contextlib.suppress(ValueError):  # paths on different drives share nothing
                common = Path(os.path.commonpath((str(path), str(common))))
    if common is None:
        return invocation
    return common.parent if common.is_file() else common


def _locate_config(bases: Sequence[Path]) -> tuple[Path, Path, _Config] | None:
    first_pyproject: Path | None = None
    for base in bases:
        for folder in (base, *base.parents):
            for name, loader in _LOADERS.items():
                candidate = folder / name
                if not candidate.is_file():
                    continue
                if name == "pyproject.toml" and first_pyproject is None:
                    first_pyproject = candidate
                config = loader(candidate)
                if config is not None:
                    return folder, candidate, config
    if first_pyproject is not None:
        return first_pyproject.parent, first_pyproject, _Config({})
    return None


def _is_fs_root(path: Path) -> bool:
    return os.path.splitdrive(str(path))[1] == os.sep


# -- configuration files ----------------------------------------------------------------------


def _ini_sections(path: Path) -> Mapping[str, Mapping[str, str]]:
    import iniconfig  # pytest's own ini reader (a dependency of pytest), for identical parsing

    try:
        parsed = iniconfig.IniConfig(str(path))
    except iniconfig.ParseError as exc:
        raise RootError(str(exc)) from None
    except OSError as exc:
        raise RootError(f"{path}: cannot read: {exc}") from None
    return parsed.sections


def _toml(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RootError(f"{path}: {exc}") from None


def _pytest_toml(path: Path) -> _Config | None:
    document = _toml(path)
    table = document.get("pytest")
    if isinstance(table, dict):
        return _Config(table)
    top_level = [key for key, value in document.items() if not isinstance(value, dict)]
    if top_level:
        raise RootError(f"{path}: pytest configuration must be under a [pytest] table")
    return _Config({})


def _pytest_ini(path: Path) -> _Config | None:
    return _Config(_ini_sections(path).get("pytest", {}))


def _pyproject(path: Path) -> _Config | None:
    tool = _toml(path).get("tool", {})
    table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        return None
    native = {k: v for k, v in table.items() if k != "ini_options"}
    ini_options = table.get("ini_options")
    if native and ini_options is not None:
        raise RootError(f"{path}: cannot use both [tool.pytest] and [tool.pytest.ini_options]")
    if native:
        return _Config(native)
    if isinstance(ini_options, dict):
        return _Config({k: v if isinstance(v, list) else str(v) for k, v in ini_options.items()})
    return None


def _tox_ini(path: Path) -> _Config | None:
    section = _ini_sections(path).get("pytest")
    return None if section is None else _Config(section)


def _setup_cfg(path: Path) -> _Config | None:
    sections = _ini_sections(path)
    if "tool:pytest" in sections:
        return _Config(sections["tool:pytest"])
    if "pytest" in sections:
        raise RootError(
            f"{path}: [pytest] section in setup.cfg files is no longer supported, use [tool:pytest]"
        )
    return None


# In pytest's order of precedence: the first one found in a folder wins.
_LOADERS: dict[str, Callable[[Path], _Config | None]] = {
    "pytest.toml": _pytest_toml,
    ".pytest.toml": _pytest_toml,
    "pytest.ini": _pytest_ini,
    ".pytest.ini": _pytest_ini,
    "pyproject.toml": _pyproject,
    "tox.ini": _tox_ini,
    "setup.cfg": _setup_cfg,
}


def _from_config(rootdir: Path, inifile: Path, config: _Config) -> ProjectRoot:
    source = f"{inifile}"
    values = config.values
    paths = values.get("llmjudge_paths")
    rubrics = values.get("llmjudge_rubrics")
    lint = values.get("llmjudge_lint")
    return ProjectRoot(
        rootdir=rootdir,
        inifile=inifile,
        benchmark_paths=_linelist(paths, f"{source}: llmjudge_paths")
        if paths is not None
        else BENCHMARK_PATHS_DEFAULT,
        rubrics=str(rubrics) if rubrics else RUBRICS_DEFAULT,
        lint=None if lint is None else _bool(lint, f"{source}: llmjudge_lint"),
        values=dict(values),
    )


def _linelist(value: object, source: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(stripped for line in value.split("\n") if (stripped := line.strip()))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise RootError(f"{source}: expected a list of folder names, got {value!r}")


def _bool(value: object, source: str) -> bool:
    if isinstance(value, bool):
        return value
    return read_bool(str(value), source)
