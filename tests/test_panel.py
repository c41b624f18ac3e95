"""A panel of judges: its configuration in benchmark files and run options, and whole runs of a
three-judge panel behind a loopback OpenAI-compatible server, told apart by model name."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_llmjudge.suite import files as spec
from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.panel_spec import PanelMember
from pytest_llmjudge.suite.settings import RunSettings, panel_for, resolve

HEAD = """\
code: P1
concept: The output is right.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
cases:
  - {id: c0, candidate_output: o}
"""


def load(tmp_path: Path, judge: str) -> spec.Benchmark:
    path = tmp_path / "benchmarks" / "P1.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(judge), encoding="utf-8")
    return spec.load_benchmark(path, "benchmarks/P1.yaml", tmp_path)


def test_a_benchmark_panel_with_its_own_server_per_member(tmp_path: Path) -> None:
    benchmark = load(
        tmp_path,
        """\
        judge:
          panel: [openai:a, {model: openai:b, base_url: "http://h:1/v1"}, local]
          panel_rule: unanimous
        """,
    )
    panel = panel_for(benchmark, RunSettings(panel=("openai:x", "openai:y")))
    assert panel is not None
    assert panel.members == (
        PanelMember("openai:a"),
        PanelMember("openai:b", "http://h:1/v1"),
        PanelMember("local"),
    )
    assert (panel.rule, panel.min_members) == ("unanimous", 2)  # min_members: a majority of 3
    assert panel.labels[1] == "openai:b@http://h:1/v1"


def test_the_run_panel_applies_where_a_benchmark_names_no_judge(tmp_path: Path) -> None:
    settings = RunSettings(panel=("openai:a", "openai:b@http://h:1/v1"), panel_rule="any")
    panel = panel_for(load(tmp_path, "judge: {min_members: 1}\n"), settings)
    assert panel is not None and (panel.rule, panel.min_members) == ("any", 1)
    assert panel.members[1] == PanelMember("openai:b", "http://h:1/v1")
    assert panel_for(load(tmp_path, "judge: {model: openai:one}\n"), settings) is None
    assert panel_for(load(tmp_path, ""), RunSettings()) is None
    with pytest.raises(ValueError, match="min_members is 3 but the panel has 2"):
        panel_for(load(tmp_path, "judge: {min_members: 3}\n"), settings)


@pytest.mark.parametrize(
    ("judge", "line", "message"),
    [
        ("judge:\n  panel: [openai:a]\n", 7, "a panel needs at least 2 judges, got 1"),
        ("judge:\n  panel:\n    - openai:a\n    - openai:a\n", 9, "openai:a is named twice"),
        ("judge:\n  model: openai:x\n  panel: [openai:a, openai:b]\n", 7, "one judge ('model') or a panel"),
        ("judge:\n  panel: [openai:a, openai:b]\n  min_members: 3\n", 8, "3 judges must answer"),
        ("judge:\n  panel: [openai:a, openai:b]\n  panel_rule: mean\n", 8, "panel_rule"),
        ("judge:\n  panel: [openai:a, openai:b]\n  mode: pairwise\n", 8, "pairwise mode takes one judge"),
    ],
)
def test_a_bad_panel_is_an_error_at_its_line(tmp_path: Path, judge: str, line: int, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        load(tmp_path, judge)
    assert caught.value.location.line == line
    assert message in caught.value.render()


def test_run_options_ini_and_environment() -> None:
    def settings(cli: dict[str, object], env: dict[str, str], ini: dict[str, object]) -> RunSettings:
        return resolve(lambda n: cli.get(n), lambda n: ini.get(n), env)

    assert settings({"panel": ["openai:a,openai:b", "openai:c"]}, {}, {}).panel == (
        "openai:a",
        "openai:b",
        "openai:c",
    )
    assert settings({}, {"LLMJUDGE_PANEL": "a,b", "LLMJUDGE_PANEL_RULE": "any"}, {}).panel_rule == "any"
    assert settings({}, {}, {"panel": ["a", "b@http://h/v1"], "panel_rule": "unanimous"}).panel == (
        "a",
        "b@http://h/v1",
    )
    cases: list[tuple[dict[str, object], str]] = [
        ({"panel": ["openai:a"]}, "--llmjudge-panel: a panel needs at least 2 judges, got 1"),
        ({"panel": ["a,a"]}, "--llmjudge-panel: a is named twice"),
        ({"panel": ["a,b@"]}, "is not a panel member 'MODEL' or 'MODEL@BASE_URL'"),
        ({"panel_rule": "mean"}, "--llmjudge-panel-rule: 'mean' is not one of majority, unanimous, any"),
    ]
    for cli, problem in cases:
        with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
            settings(cli, {}, {})
