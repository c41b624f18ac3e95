"""A Python callable as a task: ``task: "package.module:function"``, imported from the rootdir as a
conftest is, sync or async, called with one ``TaskInput``."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..suite.errors import Location, SpecError
from ..suite.hashing import digest
from .task_input import TaskInput


@dataclass(frozen=True)
class PythonTask:
    import_path: str
    version: str | None
    function: Callable[[TaskInput], Any]
    sees_ground_truth: bool = False

    @property
    def label(self) -> str:
        return self.import_path + (f"@{self.version}" if self.version else "")

    @property
    def fingerprint(self) -> str:
        """What names the task's outputs in the cache: bump ``task_version`` to regenerate."""
        return digest({"kind": "python", "import_path": self.import_path, "version": self.version})

    async def __call__(self, task_input: TaskInput) -> Any:
        if inspect.iscoroutinefunction(self.function):
            return await self.function(task_input)
        result = await asyncio.to_thread(self.function, task_input)
        if inspect.isawaitable(result):  # a callable object whose __call__ is async
            return await result
        return result


def load_python_task(
    import_path: str, version: str | None, rootdir: Path, where: Location, sees_ground_truth: bool = False
) -> PythonTask:
    """Import ``module:function`` (the module importable from ``rootdir``); a path that does not
    import, names no callable or one that cannot take one argument is a ``SpecError`` at ``where``."""
    module_name, _, attribute = import_path.partition(":")
    if str(rootdir) not in sys.path:
        sys.path.insert(0, str(rootdir))
    hint = "name a callable as 'package.module:function', the module importable from the rootdir"
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or whatever the module raises while it is imported
        raise SpecError(
            where, "task", f"cannot import {module_name!r}: {type(exc).__name__}: {exc}", hint
        ) from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise SpecError(where, "task", f"module {module_name!r} has no attribute {part!r}", hint)
        target = getattr(target, part)
    if not callable(target):
        raise SpecError(where, "task", f"{import_path} is a {type(target).__name__}, not callable", hint)
    try:
        inspect.signature(target).bind(object())
    except TypeError:
        raise SpecError(
            where,
            "task",
            f"{import_path}{_signature(target)} cannot be called with one argument",
            "a task takes one argument, the case (pytest_llmjudge.tasks.task_input.TaskInput)",
        ) from None
    except ValueError:  # no signature to inspect (some builtins): calling will tell
        pass
    return PythonTask(import_path, version, target, sees_ground_truth)


def _signature(function: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(function))
    except (TypeError, ValueError):
        return "(…)"
