"""``suite.root.find_root`` picks the folder pytest picks, in every layout pytest supports."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.config.findpaths import determine_setup

from pytest_llmjudge.suite.root import ProjectRoot, RootError, find_root

CONFIGS = {
    "none": {},
    "pytest.ini": {"pytest.ini": "[pytest]\nllmjudge_paths =\n    suites\n    more\n"},
    "empty pytest.ini": {"pytest.ini": ""},
    ".pytest.ini": {".pytest.ini": "[pytest]\nllmjudge_rubrics = groups\n"},
    "pytest.toml": {"pytest.toml": '[pytest]\nllmjudge_paths = ["suites"]\n'},
    "tox.ini": {"tox.ini": "[pytest]\nllmjudge_paths = suites\nllmjudge_lint = true\n"},
    "tox.ini without [pytest]": {"tox.ini": "[tox]\nenvlist = py311\n"},
    "setup.cfg": {"setup.cfg": "[tool:pytest]\nllmjudge_paths = suites\n"},
    "setup.cfg without [tool:pytest]": {"setup.cfg": "[metadata]\nname = x\n"},
    "pyproject ini_options": {"pyproject.toml": '[tool.pytest.ini_options]\nllmjudge_paths = ["suites"]\n'},
    "pyproject native": {"pyproject.toml": "[tool.pytest]\nllmjudge_lint = true\n"},
    "bare pyproject": {"pyproject.toml": "[project]\nname = 'x'\n"},
    "setup.py": {"setup.py": ""},
    "tox.ini beats setup.cfg": {"tox.ini": "[pytest]\n", "setup.cfg": "[tool:pytest]\n"},
    "pytest.ini beats pyproject": {
        "pytest.ini": "[pytest]\n",
        "pyproject.toml": "[tool.pytest.ini_options]\n",
    },
    "nested pytest.ini under a bare pyproject": {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "benchmarks/pytest.ini": "[pytest]\n",
    },
    "bare pyproject in a subfolder, tox.ini above": {
        "benchmarks/pyproject.toml": "[project]\nname = 'x'\n",
        "tox.ini": "[pytest]\n",
    },
}

# (folder to run in, arguments): what a user or pre-commit runs.
RUNS = [
    (".", []),
    (".", ["benchmarks"]),
    (".", ["evaluators", "benchmarks", "rubrics"]),
    (".", ["benchmarks/a/A-ONE.yaml", "evaluators/llm-judge/one_prompt.md"]),
    (".", ["benchmarks/a/A-ONE.yaml"]),
    (".", ["benchmarks/a/A-ONE.yaml::A-ONE::case"]),
    (".", ["no/such/path"]),
    ("benchmarks", []),
    ("benchmarks", ["."]),
    ("benchmarks", [".."]),
    ("benchmarks", ["a/A-ONE.yaml"]),
    ("benchmarks", ["../evaluators", "."]),
    ("benchmarks/a", ["A-ONE.yaml", "../../evaluators/llm-judge/one_prompt.md"]),
]


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for name, text in {
        "benchmarks/a/A-ONE.yaml": "code: A-ONE\n",
        "evaluators/llm-judge/one_prompt.md": "SYSTEM: x\n",
        "rubrics/A.yaml": "code: A\nbenchmarks: [A-ONE]\n",
        **files,
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("config", list(CONFIGS))
def test_same_rootdir_and_ini_file_as_pytest(
    config: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", CONFIGS[config])
    for folder, args in RUNS:
        cwd = repo / folder
        monkeypatch.chdir(cwd)
        rootdir, inipath, _, _ = determine_setup(
            inifile=None, override_ini=None, args=args, rootdir_cmd_arg=None, invocation_dir=cwd
        )
        found = find_root(args, cwd)
        assert (found.rootdir, found.inifile) == (rootdir, inipath), (folder, args)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("none", ProjectRoot(Path("."))),
        ("pytest.ini", ProjectRoot(Path("."), Path("pytest.ini"), ("suites", "more"))),
        (".pytest.ini", ProjectRoot(Path("."), Path(".pytest.ini"), rubrics="groups")),
        ("pytest.toml", ProjectRoot(Path("."), Path("pytest.toml"), ("suites",))),
        ("tox.ini", ProjectRoot(Path("."), Path("tox.ini"), ("suites",), lint=True)),
        ("setup.cfg", ProjectRoot(Path("."), Path("setup.cfg"), ("suites",))),
        ("pyproject ini_options", ProjectRoot(Path("."), Path("pyproject.toml"), ("suites",))),
        ("pyproject native", ProjectRoot(Path("."), Path("pyproject.toml"), lint=True)),
    ],
)
def test_plugin_settings_from_the_ini_file(config: str, expected: ProjectRoot, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CONFIGS[config])
    found = find_root(["benchmarks/a/A-ONE.yaml"], repo)
    assert found == ProjectRoot(
        repo,
        repo / expected.inifile if expected.inifile else None,
        expected.benchmark_paths,
        expected.rubrics,
        expected.lint,
    )


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"tox.ini": "[pytest\n"}, "tox.ini"),
        ({"setup.cfg": "[pytest]\nx = 1\n"}, "use [tool:pytest]"),
        ({"pyproject.toml": "[tool.pytest\n"}, "pyproject.toml"),
        ({"pytest.ini": "[pytest]\nllmjudge_lint = maybe\n"}, "llmjudge_lint: cannot read 'maybe'"),
    ],
)
def test_files_pytest_refuses_are_errors(files: dict[str, str], message: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", files)
    with pytest.raises(RootError, match=message.replace("[", r"\[")):
        find_root(["benchmarks"], repo)
