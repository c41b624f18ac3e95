"""Output capture of case items: only while an item waits for its verdict.

pytest's capture manager resumes and suspends the process's output capture around each phase
of each item (``dup2`` of the standard streams, then a read and truncation of its file): three
rounds of system calls per item, each of which hands the GIL to the scheduler's thread in the
middle of judging. A case item runs no code of the user's in its phases. The only output it
can catch is what a task or a judge prints in the scheduler's thread while the item waits for
its verdict, so its hooks skip the capture manager and the item captures that wait itself,
into the same "Captured stdout setup" section as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

PHASES = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown")
_HOOKS = pytest.StashKey[dict[Any, Any]]()  # a folder's hooks (conftests apply per folder) -> case hooks


class CaseHooks:
    """``item.ihook`` of a case item: the hooks pytest calls for its path, with the three runtest
    phases called without the capture manager (pluggy's ``subset_hook_caller``, as pytest's own
    per-folder hook proxies are built)."""

    def __init__(self, hooks: Any, config: pytest.Config, capture: object) -> None:
        self._hooks = hooks
        manager = config.pluginmanager
        self._phases = {}
        for name in PHASES:
            used = {impl.plugin for impl in getattr(hooks, name).get_hookimpls()}
            unused = {impl.plugin for impl in getattr(config.hook, name).get_hookimpls()} - used
            self._phases[name] = manager.subset_hook_caller(name, [capture, *unused])

    def __getattr__(self, name: str) -> Any:
        phase = self._phases.get(name)
        return phase if phase is not None else getattr(self._hooks, name)


def case_hooks(item: pytest.Item) -> Any:
    """The hooks of case ``item``: its path's, less the capture manager's phase work."""
    known = item.config.stash.setdefault(_HOOKS, {})
    found = known.get(item.path.parent)
    if found is None:
        hooks = item.session.gethookproxy(item.path)
        capture = item.config.pluginmanager.get_plugin("capturemanager")
        found = hooks if capture is None else CaseHooks(hooks, item.config, capture)  # -p no:capture
        known[item.path.parent] = found
    return found


@contextlib.contextmanager
def captured_wait(item: pytest.Item) -> Iterator[None]:
    """Capture what is printed while ``item`` waits (a task's or judge's print in the scheduler's
    thread), into the item's setup section, as pytest would have."""
    capture = item.config.pluginmanager.get_plugin("capturemanager")
    if capture is None:
        yield
        return
    with capture.item_capture("setup", item):
        yield
