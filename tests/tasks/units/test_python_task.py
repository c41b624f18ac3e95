"""A Python callable as a task: loaded from the rootdir with a ``SpecError`` at the task's line
when it cannot be used, called sync (in a daemon thread) or async, and whatever it raises comes
back as ``TaskRaised``, never reaching the run's loop."""

from __future__ import annotations

import asyncio
import contextvars
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.suite.errors import Location, SpecError
from pytest_llmjudge.tasks.python_task import PythonTask, TaskRaised, in_daemon_thread, load_python_task
from pytest_llmjudge.tasks.task_input import TaskInput

WHERE = Location("benchmarks/T1.yaml", 5, 7)
CASE = TaskInput("c1", "T1", "alpha", {"country": "fr"})


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield


def write_module(root: Path, source: str) -> str:
    """A package of its own under ``root`` holding ``produce.py``; its import name."""
    package = f"app_{uuid.uuid4().hex[:12]}"
    (root / package).mkdir()
    (root / package / "__init__.py").write_text("")
    (root / package / "produce.py").write_text(textwrap.dedent(source))
    return f"{package}.produce"


def spec_error(import_path: str, root: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_python_task(import_path, None, root, WHERE)
    return str(caught.value)


def run(task: PythonTask, given: TaskInput = CASE) -> Any:
    return asyncio.run(task(given))


# -- loading ---------------------------------------------------------------------------------------


def test_a_task_is_imported_from_the_rootdir_and_called_with_the_case(tmp_path: Path) -> None:
    module = write_module(tmp_path, "def run(case):\n    return case.id + ':' + case.inputs['country']\n")
    task = load_python_task(f"{module}:run", "3", tmp_path, WHERE, sees_ground_truth=True)
    assert str(tmp_path) in sys.path
    assert task.sees_ground_truth and task.import_path == f"{module}:run" and task.version == "3"
    assert run(task) == "c1:fr"


def test_the_rootdir_is_put_on_the_path_once(tmp_path: Path) -> None:
    first = write_module(tmp_path, "def run(case):\n    return 1\n")
    second = write_module(tmp_path, "def run(case):\n    return 2\n")
    load_python_task(f"{first}:run", None, tmp_path, WHERE)
    load_python_task(f"{second}:run", None, tmp_path, WHERE)
    assert sys.path.count(str(tmp_path)) == 1


def test_a_task_may_be_an_attribute_of_an_object_in_the_module(tmp_path: Path) -> None:
    module = write_module(
        tmp_path,
        """\
        class Tasks:
            @staticmethod
            def run(case):
                return "nested " + case.id
        """,
    )
    assert run(load_python_task(f"{module}:Tasks.run", None, tmp_path, WHERE)) == "nested c1"


def test_a_module_that_does_not_import_is_an_error_at_the_task_line(tmp_path: Path) -> None:
    message = spec_error("nowhere_to_be_found_x:run", tmp_path)
    assert message.startswith(
        "benchmarks/T1.yaml:5:7: task: cannot import 'nowhere_to_be_found_x': ModuleNotFoundError: "
    )
    assert (
        "hint: name a callable as 'package.module:function', the module importable from the rootdir"
        in message
    )


def test_a_module_that_raises_while_imported_is_an_error_naming_what_it_raised(tmp_path: Path) -> None:
    module = write_module(tmp_path, "raise RuntimeError('no config')\n")
    assert f"task: cannot import '{module}': RuntimeError: no config" in spec_error(f"{module}:run", tmp_path)


def test_a_missing_attribute_is_an_error_naming_it(tmp_path: Path) -> None:
    module = write_module(tmp_path, "class Tasks:\n    pass\n")
    message = spec_error(f"{module}:Tasks.missing", tmp_path)
    assert message.startswith(f"benchmarks/T1.yaml:5:7: task: module '{module}' has no attribute 'missing'\n")
    assert message.endswith(
        "  hint: name a callable as 'package.module:function', the module importable from the rootdir"
    )


def test_the_function_is_named_after_the_first_colon(tmp_path: Path) -> None:
    module = write_module(tmp_path, "def run(case):\n    return 'x'\n")
    assert f"task: module '{module}' has no attribute 'run:extra'" in spec_error(
        f"{module}:run:extra", tmp_path
    )


def test_the_rootdirs_module_wins_over_one_of_the_same_name_elsewhere_on_the_path(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    name = f"shadowed_{uuid.uuid4().hex[:12]}"
    (root / f"{name}.py").write_text("def run(case):\n    return 'from the rootdir'\n")
    (elsewhere / f"{name}.py").write_text("def run(case):\n    return 'from elsewhere'\n")
    sys.path.insert(0, str(elsewhere))
    task = load_python_task(f"{name}:run", None, root, WHERE)
    assert run(task) == "from the rootdir"


def test_a_task_loaded_without_saying_does_not_see_the_ground_truth(tmp_path: Path) -> None:
    module = write_module(tmp_path, "def run(case):\n    return 'x'\n")
    assert not load_python_task(f"{module}:run", None, tmp_path, WHERE).sees_ground_truth


def test_a_value_that_is_not_callable_is_an_error_naming_its_type(tmp_path: Path) -> None:
    module = write_module(tmp_path, "SUFFIX = 'x'\n")
    message = spec_error(f"{module}:SUFFIX", tmp_path)
    assert message.startswith(
        f"benchmarks/T1.yaml:5:7: task: {module}:SUFFIX is a str, not callable\n  hint: "
    )


@pytest.mark.parametrize("signature", ["()", "(case, extra)", "(*, case)"])
def test_a_callable_that_cannot_take_one_argument_is_an_error_showing_its_signature(
    tmp_path: Path, signature: str
) -> None:
    module = write_module(tmp_path, f"def run{signature}:\n    return 'x'\n")
    assert spec_error(f"{module}:run", tmp_path) == (
        f"benchmarks/T1.yaml:5:7: task: {module}:run{signature} cannot be called with one argument\n"
        "  hint: a task takes one argument, the case (pytest_llmjudge.tasks.task_input.TaskInput)"
    )


@pytest.mark.parametrize("signature", ["(case, extra=None)", "(*args)", "(case, /)"])
def test_a_callable_that_can_take_one_argument_loads(tmp_path: Path, signature: str) -> None:
    module = write_module(tmp_path, f"def run{signature}:\n    return 'ok'\n")
    assert run(load_python_task(f"{module}:run", None, tmp_path, WHERE)) == "ok"


def test_a_builtin_without_a_signature_loads_and_calling_it_tells(tmp_path: Path) -> None:
    task = load_python_task("builtins:next", None, tmp_path, WHERE)
    with pytest.raises(TaskRaised, match=r"^TypeError: 'TaskInput' object is not an iterator$"):
        run(task)


def test_a_callable_whose_signature_cannot_be_read_loads_and_calling_it_tells(tmp_path: Path) -> None:
    module = write_module(
        tmp_path,
        """
        class Produce:
            __signature__ = "not a signature"

            def __call__(self, case):
                return "called"

        run = Produce()
        """,
    )
    assert run(load_python_task(f"{module}:run", None, tmp_path, WHERE)) == "called"


# -- label and fingerprint -------------------------------------------------------------------------


def noop(case: TaskInput) -> str:
    return "x"


def test_the_label_names_the_version_when_there_is_one() -> None:
    assert PythonTask("app.produce:run", "2", noop).label == "app.produce:run@2"
    assert PythonTask("app.produce:run", None, noop).label == "app.produce:run"
    assert PythonTask("app.produce:run", "", noop).label == "app.produce:run"


def test_the_fingerprint_changes_with_the_import_path_and_the_version_only() -> None:
    base = PythonTask("app.produce:run", "1", noop).fingerprint
    assert (
        PythonTask("app.produce:run", "1", lambda case: "other", sees_ground_truth=True).fingerprint == base
    )
    assert PythonTask("app.produce:run", "2", noop).fingerprint != base
    assert PythonTask("app.produce:run", None, noop).fingerprint != base
    assert PythonTask("app.other:run", "1", noop).fingerprint != base


# -- calling ---------------------------------------------------------------------------------------


def test_a_sync_task_runs_in_a_daemon_thread_of_its_own() -> None:
    seen: list[threading.Thread] = []

    def task(case: TaskInput) -> str:
        seen.append(threading.current_thread())
        return "done " + case.id

    assert run(PythonTask("t:run", None, task)) == "done c1"
    (thread,) = seen
    assert thread is not threading.main_thread() and thread.daemon and thread.name == "llmjudge-task"


def test_an_async_task_is_awaited() -> None:
    async def task(case: TaskInput) -> dict[str, str]:
        await asyncio.sleep(0)
        return {"id": case.id}

    assert run(PythonTask("t:run", None, task)) == {"id": "c1"}


def test_a_callable_object_whose_call_is_async_is_awaited() -> None:
    class Task:
        async def __call__(self, case: TaskInput) -> str:
            await asyncio.sleep(0)
            return "awaited " + case.id

    assert run(PythonTask("t:run", None, Task())) == "awaited c1"


def test_a_sync_task_sees_the_context_variables_of_its_caller() -> None:
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")

    def task(case: TaskInput) -> str:
        return request_id.get()

    async def main() -> Any:
        request_id.set("r-7")
        return await PythonTask("t:run", None, task)(CASE)

    assert asyncio.run(main()) == "r-7"


def raise_it(exc: BaseException) -> Any:
    def task(case: TaskInput) -> Any:
        raise exc

    return task


def raise_it_async(exc: BaseException) -> Any:
    async def task(case: TaskInput) -> Any:
        await asyncio.sleep(0)
        raise exc

    return task


RAISED = [
    (ValueError("the product broke"), "ValueError: the product broke"),
    (KeyError("france"), "KeyError: 'france'"),
    (SystemExit(2), "SystemExit: 2"),
    (KeyboardInterrupt(), "KeyboardInterrupt"),
    (GeneratorExit("closed"), "GeneratorExit: closed"),
    (asyncio.CancelledError("gave up"), "CancelledError: gave up"),
]


@pytest.mark.parametrize("make", [raise_it, raise_it_async], ids=["sync", "async"])
@pytest.mark.parametrize(("exc", "message"), RAISED, ids=[type(e).__name__ for e, _ in RAISED])
def test_whatever_a_task_raises_comes_back_as_task_raised(
    make: Any, exc: BaseException, message: str
) -> None:
    with pytest.raises(TaskRaised) as caught:
        run(PythonTask("t:run", None, make(exc)))
    assert str(caught.value) == message
    assert caught.value.raised is exc


def test_a_task_raised_from_inside_a_task_is_passed_on_as_it_is() -> None:
    inner = TaskRaised(ValueError("inner"))
    with pytest.raises(TaskRaised) as caught:
        run(PythonTask("t:run", None, raise_it_async(inner)))
    assert caught.value is inner


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_a_run_that_cancels_the_task_is_cancelled_not_a_task_error(sync: bool) -> None:
    release = threading.Event()

    def hangs(case: TaskInput) -> str:
        release.wait(10)
        return "late"

    async def hangs_async(case: TaskInput) -> str:
        await asyncio.sleep(10)
        return "late"

    task = PythonTask("t:run", None, hangs if sync else hangs_async)

    async def main() -> None:
        running = asyncio.ensure_future(task(CASE))
        await asyncio.sleep(0.05)
        running.cancel()
        await running

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    release.set()


def test_a_timed_out_sync_task_is_abandoned_and_its_late_answer_ignored() -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow(case: TaskInput) -> str:
        release.wait(10)
        finished.set()
        return "late"

    async def main() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(in_daemon_thread(slow, CASE), 0.05)
        release.set()
        await asyncio.get_running_loop().run_in_executor(None, finished.wait, 10)
        await asyncio.sleep(0.05)  # the late answer reaches the loop, which ignores it

    asyncio.run(main())
    assert finished.is_set()


def test_a_sync_task_that_outlives_the_loop_does_not_raise() -> None:
    release = threading.Event()
    finished = threading.Event()
    errors: list[BaseException] = []

    def slow(case: TaskInput) -> str:
        release.wait(10)
        return "late"

    def hook(args: threading.ExceptHookArgs) -> None:
        errors.append(args.exc_value or RuntimeError())

    async def main() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(in_daemon_thread(slow, CASE), 0.05)

    original = threading.excepthook
    threading.excepthook = hook
    try:
        asyncio.run(main())  # the loop is closed before the task answers
        release.set()
        for thread in threading.enumerate():
            if thread.name == "llmjudge-task":
                thread.join(10)
        finished.set()
    finally:
        threading.excepthook = original
    assert errors == []


def test_in_daemon_thread_raises_task_raised_for_what_the_function_raised() -> None:
    async def main() -> Any:
        return await in_daemon_thread(raise_it(SystemExit(3)), CASE)

    with pytest.raises(TaskRaised, match=r"^SystemExit: 3$"):
        asyncio.run(main())
