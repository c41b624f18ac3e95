"""Which items a run will execute, as far as pytest lets a plugin know early."""

from __future__ import annotations

import pytest

# Plugins whose pytest_collection_modifyitems only deselects through the options checked below
# (or never): pytest's -k/-m, --deselect, --lf, fixture reordering, syrupy, hypothesis (it only
# marks its own tests), this plugin.
_SELECTION_PLUGINS = (
    "_pytest.mark",
    "_pytest.main",
    "_pytest.fixtures",
    "_pytest.cacheprovider",
    "syrupy",
    "_hypothesis_pytestplugin",
)


def selection_is_final(config: pytest.Config) -> bool:
    """Whether every collected item will run: no option or plugin can deselect any, and no
    xdist process hands out the items (each worker judges only what it is sent)."""
    option = config.option
    if option.collectonly or getattr(option, "setuponly", False) or getattr(option, "setupplan", False):
        return False
    if hasattr(config, "workerinput") or config.getoption("numprocesses", None):
        return False
    if option.keyword or option.markexpr or getattr(option, "deselect", None):
        return False
    if any("::" in arg for arg in config.args):
        return False  # node ids pick items out of a collected file
    if config.getoption("lf", False):
        return False
    for impl in config.hook.pytest_collection_modifyitems.get_hookimpls():
        module = getattr(impl.function, "__module__", "") or ""
        if module.split(".")[0] != "pytest_llmjudge" and module not in _SELECTION_PLUGINS:
            return False  # a conftest or plugin that may deselect items
    return True


def queued_on_worker(config: pytest.Config, session: pytest.Session) -> list[pytest.Item]:
    """Items already sent to this xdist worker, so their judge calls start ahead of time."""
    # xdist registers its WorkerInteractor without a name: find it by its queue.
    interactor = next((p for p in config.pluginmanager.get_plugins() if hasattr(p, "torun")), None)
    if interactor is None:
        return []
    with interactor.torun.lock() as pending:
        indices = [i for i in pending if isinstance(i, int)]
    return [session.items[i] for i in indices]


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def not_collected_hints(config: pytest.Config, benchmark_files: set[str]) -> list[str]:
    """Why a YAML file named on the command line was not collected as a benchmark."""
    from pathlib import Path

    folders = ", ".join(config.getini("llmjudge_paths"))
    lines = []
    for arg in config.args:
        path = Path(arg.split("::")[0])
        if path.suffix not in {".yaml", ".yml"} or not path.is_file():
            continue
        try:
            nodeid = path.resolve().relative_to(config.rootpath.resolve()).as_posix()
        except ValueError:
            nodeid = str(path)
        if nodeid not in benchmark_files:
            lines.append(
                f"{arg}: not collected: benchmark files are YAML files that declare `code:` below "
                f"a folder named in the ini option llmjudge_paths (now: {folders})"
            )
    return lines
