"""Small rules of ``suite/`` that users meet through errors, in process: the nesting bound checked
before a cases file is parsed, a damaged cache row's counts and durations, panel members as the
command line and a benchmark file give them, and the "did you mean" of an unknown key."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

from pytest_llmjudge.suite.cache_damage import CacheDamageWarning, count, seconds, warn_damaged
from pytest_llmjudge.suite.errors import nearest
from pytest_llmjudge.suite.files import load_benchmark
from pytest_llmjudge.suite.nesting import MAX_DEPTH, json_too_deep
from pytest_llmjudge.suite.panel_spec import (
    PanelMember,
    default_min_members,
    panel_problem,
    parse_member,
    spec_members,
)


def test_json_nesting_is_counted_by_open_brackets_outside_strings() -> None:
    assert MAX_DEPTH == 100
    assert json_too_deep("[" * 100 + "]" * 100) is None  # exactly the limit
    assert json_too_deep("[" * 101 + "]" * 101) == 100  # the offset of the bracket past it
    assert json_too_deep('{"a":' * 101 + "1" + "}" * 101) == 5 * 100
    assert json_too_deep("[{" * 50 + "[" + "]" + "}]" * 50) == 100  # both kinds count
    # closed brackets give their level back: many shallow values are not deep
    assert json_too_deep("[" + "[]," * 200 + "[]]") is None
    assert json_too_deep("[" + "{}," * 200 + "{}]") is None
    assert json_too_deep("[[]]" + "[" * 101 + "]" * 101) == 4 + 100  # one level back per bracket
    # brackets inside strings are text
    assert json_too_deep('["' + "[" * 300 + '"]') is None
    assert json_too_deep('["\\"' + "[" * 300 + '"]') is None


def test_a_stored_count_or_duration_that_is_not_one_is_damage() -> None:
    assert count(0, "n") == 0
    assert count(12, "n") == 12
    for bad in (-1, True, 1.5, "3", None):
        with pytest.raises(TypeError) as raised:
            count(bad, "input_tokens")
        assert str(raised.value) == f"input_tokens is {bad!r}, not a count"
    assert seconds(0, "s") == 0.0
    assert seconds(2, "s") == 2.0
    assert isinstance(seconds(2, "s"), float)
    for bad_duration in (-0.5, math.inf, math.nan, False, "1", None):
        with pytest.raises(TypeError) as raised:
            seconds(bad_duration, "latency_s")
        assert str(raised.value) == f"latency_s is {bad_duration!r}, not a duration"


def test_damage_is_one_warning_and_never_an_error(tmp_path: Path) -> None:
    with pytest.warns(CacheDamageWarning) as caught:
        warn_damaged(tmp_path / "cache.sqlite", "a verdict row cannot be read")
    assert [str(w.message) for w in caught] == [f"{tmp_path / 'cache.sqlite'}: a verdict row cannot be read"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_damaged(tmp_path / "cache.sqlite", "x")  # -W error: still a miss, not a crash


@pytest.mark.parametrize(
    ("text", "member"),
    [
        ("openai:a", PanelMember("openai:a")),
        (" openai:a @ http://h:1/v1 ", PanelMember("openai:a", "http://h:1/v1")),
        ("openai:a@http://u@h/v1", PanelMember("openai:a", "http://u@h/v1")),
    ],
)
def test_a_member_from_the_command_line(text: str, member: PanelMember) -> None:
    assert parse_member(text) == member


def test_members_labels_and_problems() -> None:
    assert PanelMember("openai:a", "http://h/v1").label == "openai:a@http://h/v1"
    assert PanelMember("openai:a").label == "openai:a"
    assert [default_min_members(n) for n in (2, 3, 4, 5, 6, 7)] == [2, 2, 3, 3, 4, 4]
    assert panel_problem([PanelMember("a")]) == "a panel needs at least 2 judges, got 1"
    assert panel_problem([]) == "a panel needs at least 2 judges, got 0"
    twice = [PanelMember("a", "http://x"), PanelMember("b"), PanelMember("a", "http://x")]
    assert panel_problem(twice) == "a@http://x is named twice (its verdicts would count twice)"
    assert panel_problem([PanelMember("a", "http://x"), PanelMember("a", "http://y")]) is None


def test_members_from_a_benchmark_file(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("SYSTEM: x\n\nRUBRIC\n\nPass if all of the following are true:\n- ok\n")
    (tmp_path / "B.yaml").write_text(
        "code: B\nlabel: b\nthreshold: 1.0\nevaluator_type: llm_judge\nllm_prompt_file: p.md\n"
        "judge:\n  panel: [openai:a, {model: openai:b, base_url: 'http://gpu:8000/v1'}]\n"
        "cases:\n  - {id: c, candidate_output: x}\n"
    )
    judge = load_benchmark(tmp_path / "B.yaml", "B.yaml", tmp_path).spec.judge
    assert judge is not None and judge.panel is not None
    assert spec_members(judge.panel) == (
        PanelMember("openai:a"),
        PanelMember("openai:b", "http://gpu:8000/v1"),
    )


def test_did_you_mean_prefers_the_same_letters() -> None:
    assert nearest("modle", ["mode", "model", "module"]) == "model"
    assert nearest("thresold", ["threshold", "label"]) == "threshold"
    assert nearest("zzz", ["threshold", "label"]) is None
    # only the three closest are weighed: a fourth with the same letters is not offered
    assert nearest("abcdef", ["abcdeg", "abcdeh", "abcdei", "fbcdea"]) == "abcdei"
    assert nearest("abcdef", ["abcdeg", "abcdeh", "fbcdea"]) == "fbcdea"
