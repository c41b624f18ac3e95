"""The repository root and the plugin's ini settings, beyond what ``tests/lint/test_root.py``
compares with pytest itself: the messages of files pytest refuses, booleans spelled as pytest
spells them, and the root the pytest glue builds from pytest's own values."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.config.findpaths import determine_setup

from pytest_llmjudge.suite.root import (
    BENCHMARK_PATHS_DEFAULT,
    RUBRICS_DEFAULT,
    ProjectRoot,
    RootError,
    find_root,
    read_bool,
    root_from_values,
)


@pytest.mark.parametrize("word", ["y", "YES", " t ", "True", "on", "1"])
def test_true_as_pytest_spells_it(word: str) -> None:
    assert read_bool(word, "src") is True


@pytest.mark.parametrize("word", ["n", "No", "F", "false", "OFF", " 0"])
def test_false_as_pytest_spells_it(word: str) -> None:
    assert read_bool(word, "src") is False


def test_another_word_is_refused_naming_where_it_came_from() -> None:
    with pytest.raises(RootError) as raised:
        read_bool("sometimes", "LLMJUDGE_LINT")
    assert str(raised.value) == "LLMJUDGE_LINT: cannot read 'sometimes' as a boolean (use true or false)"


def test_the_root_from_pytests_own_values() -> None:
    ini = {"llmjudge_paths": ["suites", Path("more")], "llmjudge_rubrics": "groups"}
    root = root_from_values(Path("/r"), Path("/r/tox.ini"), ini.get, lint=False)
    assert root == ProjectRoot(Path("/r"), Path("/r/tox.ini"), ("suites", "more"), "groups", False)
    unset = root_from_values(Path("/r"), None, {"llmjudge_paths": "", "llmjudge_rubrics": ""}.get)
    assert unset == ProjectRoot(Path("/r"), None, BENCHMARK_PATHS_DEFAULT, RUBRICS_DEFAULT, None)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"pytest.toml": "addopts = '-q'\n"},
            "pytest.toml: pytest configuration must be under a [pytest] table",
        ),
        (
            {
                "pyproject.toml": "[tool.pytest]\naddopts = ['-q']\n"
                "[tool.pytest.ini_options]\naddopts = '-q'\n"
            },
            "pyproject.toml: cannot use both [tool.pytest] and [tool.pytest.ini_options]",
        ),
        (
            {"setup.cfg": "[pytest]\nx = 1\n"},
            "setup.cfg: [pytest] section in setup.cfg files is no longer supported, use [tool:pytest]",
        ),
        (
            {"pytest.toml": "[pytest]\nllmjudge_paths = 3\n"},
            "pytest.toml: llmjudge_paths: expected a list of folder names, got 3",
        ),
        (
            {"pytest.toml": "[pytest]\nllmjudge_paths = ['a', 2]\n"},
            "pytest.toml: llmjudge_paths: expected a list of folder names, got ['a', 2]",
        ),
        (
            {"pytest.ini": "[pytest]\nllmjudge_lint = maybe\n"},
            "pytest.ini: llmjudge_lint: cannot read 'maybe' as a boolean (use true or false)",
        ),
    ],
)
def test_files_pytest_refuses_say_what_is_wrong(files: dict[str, str], message: str, tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", {"benchmarks/B.yaml": "code: B\n", **files})
    with pytest.raises(RootError) as raised:
        find_root(["benchmarks"], repo)
    assert str(raised.value) == f"{repo}/{message}"


def test_values_from_each_kind_of_file(tmp_path: Path) -> None:
    toml = write(
        tmp_path / "t", {"pytest.toml": "[pytest]\nllmjudge_paths = ['a', 'b']\nllmjudge_lint = false\n"}
    )
    found = find_root([], toml)
    assert (found.benchmark_paths, found.lint, found.ini("llmjudge_lint")) == (("a", "b"), False, False)
    ini = write(
        tmp_path / "i", {"tox.ini": "[pytest]\nllmjudge_paths =\n  a\n\n  b c\nllmjudge_lint = yes\n"}
    )
    found = find_root([], ini)
    assert (found.benchmark_paths, found.lint, found.ini("llmjudge_lint")) == (("a", "b c"), True, "yes")
    empty = write(tmp_path / "e", {"pytest.toml": "[tool.other]\nx = 1\n"})
    assert find_root([], empty) == ProjectRoot(tmp_path / "e", tmp_path / "e" / "pytest.toml")
    options = write(tmp_path / "o", {"pyproject.toml": "[tool.pytest.ini_options]\nllmjudge_rubrics = 5\n"})
    found = find_root([], options)
    assert (found.rubrics, found.ini("llmjudge_rubrics"), found.ini("nothing")) == ("5", "5", None)
    listed = write(tmp_path / "l", {"pyproject.toml": "[tool.pytest.ini_options]\nllmjudge_paths = ['x']\n"})
    assert find_root([], listed).benchmark_paths == ("x",)
    bare = write(tmp_path / "b", {"pyproject.toml": "[tool]\npytest = 1\n"})
    assert find_root([], bare) == ProjectRoot(tmp_path / "b", tmp_path / "b" / "pyproject.toml")


def test_the_root_of_arguments_in_several_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # no configuration above the arguments' common folder: the one beside an argument is found
    repo = write(tmp_path / "top", {"one/pytest.ini": "[pytest]\n", "one/a.yaml": "", "two/b.yaml": ""})
    found = find_root(["-q", "one/a.yaml", "two/b.yaml", "missing.yaml"], repo)
    assert (found.rootdir, found.inifile) == (repo / "one", repo / "one" / "pytest.ini")
    # node ids name their file
    assert find_root(["one/a.yaml::case"], repo).rootdir == repo / "one"
    # nothing anywhere: the common folder of the invocation and the arguments
    plain = write(tmp_path / "plain", {"x/a.yaml": "", "y/b.yaml": ""})
    assert find_root(["x/a.yaml", "y/b.yaml"], plain) == ProjectRoot(plain)
    assert find_root(["../x"], plain / "y") == ProjectRoot(plain)
    for args, cwd in (
        (["x/a.yaml", "y/b.yaml"], plain),
        (["../x"], plain / "y"),
        (["one/a.yaml", "two/b.yaml"], repo),
    ):
        monkeypatch.chdir(cwd)  # pytest reads the arguments from the current folder
        rootdir, inipath, _, _ = determine_setup(
            inifile=None, override_ini=None, args=args, rootdir_cmd_arg=None, invocation_dir=cwd
        )
        assert (find_root(args, cwd).rootdir, find_root(args, cwd).inifile) == (rootdir, inipath)
