"""Where a task's exception came from: the last frames of its traceback in the user's own
files, relative to the root, never the plugin's or the standard library's."""

from __future__ import annotations

import importlib.util
import json
import textwrap
import types
from pathlib import Path

import pytest

from pytest_llmjudge.tasks.task_errors import user_frames

CAPITALS = """\
CAPITALS = {"germany": "Berlin"}


def lookup(country):
    return CAPITALS[country]


def middle(country):
    return lookup(country)


def run(country):
    return middle(country)
"""


def load(path: Path, source: str) -> types.ModuleType:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(path.stem + "_" + path.parent.name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def raised(call: object, *args: object) -> BaseException:
    with pytest.raises(BaseException) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def test_the_last_frames_in_the_users_files_are_shown_relative_to_the_root(tmp_path: Path) -> None:
    app = load(tmp_path / "app/produce.py", CAPITALS)
    exc = raised(app.run, "france")
    assert user_frames(exc, tmp_path) == [
        "  app/produce.py:13 in run: return middle(country)",
        "  app/produce.py:9 in middle: return lookup(country)",
        "  app/produce.py:5 in lookup: return CAPITALS[country]",
    ]
    assert user_frames(exc, tmp_path, shown=1) == ["  app/produce.py:5 in lookup: return CAPITALS[country]"]


def test_the_plugins_and_the_standard_librarys_frames_are_left_out(tmp_path: Path) -> None:
    app = load(tmp_path / "app/produce.py", "import json\n\n\ndef run(text):\n    return json.loads(text)\n")
    exc = raised(app.run, "{nope")
    assert user_frames(exc, tmp_path) == ["  app/produce.py:5 in run: return json.loads(text)"]
    assert not any("test_task_errors" in line for line in user_frames(exc, tmp_path))


def test_without_frames_under_the_root_the_last_other_frames_are_shown_in_full(tmp_path: Path) -> None:
    outside = load(tmp_path / "elsewhere/lib.py", "def boom():\n    raise ValueError('x')\n")
    root = tmp_path / "repo"
    root.mkdir()
    exc = raised(outside.boom)
    lines = user_frames(exc, root)
    assert lines[-1] == f"  {tmp_path / 'elsewhere/lib.py'}:2 in boom: raise ValueError('x')"
    assert lines[0].startswith(f"  {Path(__file__)}:")  # this test's own frame: not the plugin's


def test_installed_packages_under_the_root_are_not_the_users_code(tmp_path: Path) -> None:
    library = load(tmp_path / ".venv/lib/site-packages/lib.py", "def boom():\n    raise ValueError('x')\n")
    app = load(tmp_path / "app/produce.py", "def run(boom):\n    return boom()\n")
    exc = raised(app.run, library.boom)
    assert user_frames(exc, tmp_path) == ["  app/produce.py:2 in run: return boom()"]


def test_a_frame_without_its_source_shows_no_code(tmp_path: Path) -> None:
    code = compile("def run():\n    raise ValueError('x')\n", str(tmp_path / "gone.py"), "exec")
    namespace: dict[str, object] = {}
    exec(code, namespace)
    exc = raised(namespace["run"])
    assert user_frames(exc, tmp_path) == ["  gone.py:2 in run"]


def test_an_exception_never_raised_has_no_frames(tmp_path: Path) -> None:
    assert user_frames(ValueError("x"), tmp_path) == []


def test_a_frame_of_the_standard_library_alone_is_not_shown(tmp_path: Path) -> None:
    exc = raised(json.loads, "{nope")
    lines = user_frames(exc, tmp_path)
    assert lines and all("json" not in line.split(" in ")[0] for line in lines)


def test_the_plugins_own_frames_are_left_out_even_under_the_root() -> None:
    from pytest_llmjudge.tasks.task_input import output_value

    root = Path(__file__).resolve().parents[3]  # the repository: the plugin's files lie under it
    exc = raised(output_value, 3)
    lines = user_frames(exc, root)
    assert lines and all("pytest_llmjudge/" not in line for line in lines)
    assert lines[-1].startswith("  tests/tasks/units/test_task_errors.py:")
