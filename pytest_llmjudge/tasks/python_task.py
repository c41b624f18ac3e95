"""A Python callable as a task: ``task: "package.module:function"``, imported from the rootdir as a
conftest is, sync or async, called with one ``TaskInput``.

A sync task runs in a daemon thread of its own: one that outlives its timeout is abandoned, and
never keeps the process alive after the run (a worker of ``asyncio.to_thread`` is joined at exit).
Whatever it raises, ``SystemExit`` and ``KeyboardInterrupt`` included, comes back as ``TaskRaised``
instead of reaching the scheduler's loop, which would stop with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import inspect
import sys
import threading
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
        """The task's return value; raises ``TaskRaised`` with whatever the task raised."""
        try:
            if inspect.iscoroutinefunction(self.function):
                return await self.function(task_input)
            result = await in_daemon_thread(self.function, task_input)
            if inspect.isawaitable(result):  # a callable object whose __call__ is async
                return await result
            return result
        except TaskRaised:
            raise
        except asyncio.CancelledError as exc:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this run cancels it (a timeout, -x, Ctrl-C): not the task's own doing
            raise TaskRaised(exc) from None
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit: the task's
            raise TaskRaised(exc) from None


class TaskRaised(Exception):
    """What a task raised, any ``BaseException``, carried as an ordinary exception."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__(f"{type(raised).__name__}: {raised}" if str(raised) else type(raised).__name__)
        self.raised = raised


async def in_daemon_thread(function: Callable[[TaskInput], Any], argument: TaskInput) -> Any:
    """``function(argument)`` in a new daemon thread, awaited; raises ``TaskRaised``."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: Any, raised: BaseException | None) -> None:
        if done.done():  # abandoned: its timeout passed, or the run was cancelled
            return
        if raised is not None:
            done.set_exception(TaskRaised(raised))
        else:
            done.set_result(result)

    def work() -> None:
        result: Any = None
        raised: BaseException | None = None
        try:
            result = context.run(function, argument)
        except BaseException as exc:  # whatever it is, it is the case's ERROR
            raised = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, result, raised)

    threading.Thread(target=work, name="llmjudge-task", daemon=True).start()
    return await done


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
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # none to read (some builtins, a bad __signature__): calling tells
        return PythonTask(import_path, version, target, sees_ground_truth)
    try:
        signature.bind(object())
    except TypeError:
        raise SpecError(
            where,
            "task",
            f"{import_path}{signature} cannot be called with one argument",
            "a task takes one argument, the case (pytest_llmjudge.tasks.task_input.TaskInput)",
        ) from None
    return PythonTask(import_path, version, target, sees_ground_truth)
