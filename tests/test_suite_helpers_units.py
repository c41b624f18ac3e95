"""Small rules of ``suite/`` that users meet through errors, in process: the nesting bound checked
before a cases file is parsed, a damaged cache row's counts and durations, panel members as the
command line and a benchmark file give them, and the "did you mean" of an unknown key."""

from __future__ import annotations

import hashlib
import math
import warnings
from pathlib import Path

import pytest

from pytest_llmjudge.suite.cache_damage import CacheDamageWarning, count, seconds, warn_damaged
from pytest_llmjudge.suite.errors import Location, SpecError, nearest
from pytest_llmjudge.suite.files import load_benchmark, load_rubric
from pytest_llmjudge.suite.hashing import canonical_json, digest
from pytest_llmjudge.suite.nesting import MAX_DEPTH, json_too_deep
from pytest_llmjudge.suite.panel_spec import (
    PanelMember,
    default_min_members,
    panel_problem,
    parse_member,
    spec_members,
)
from pytest_llmjudge.suite.prompt_file import parse_prompt
from pytest_llmjudge.suite.prompt_syntax import check_prompt


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


def test_identities_are_canonical_json_and_its_digest() -> None:
    assert (
        canonical_json({"b": 1, "a": [1.5, "é"], "p": Path("x/y")}) == '{"a":[1.5,"\\u00e9"],"b":1,"p":"x/y"}'
    )
    assert digest({"b": 1, "a": 2}) == digest({"a": 2, "b": 1})
    assert digest({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()


@pytest.mark.parametrize(
    ("text", "first_line"),
    [
        (
            "x" * 100 + "\nSYSTEM: x\n",
            "p.md:1:1: prompt: line not sent to the judge, text before the first section: '"
            + "x" * 59
            + "…' (and 2 more, at line 2, 2)",
        ),
        (
            "x" * 60 + "\nSYSTEM: x\n",
            "p.md:1:1: prompt: line not sent to the judge, text before the first section: '"
            + "x" * 60
            + "' (and 2 more, at line 2, 2)",
        ),
        (
            "hello\n" * 8 + "SYSTEM: x\n",
            "p.md:1:1: prompt: line not sent to the judge, text before the first section: 'hello' "
            "(and 9 more, at line 2, 3, 4, 5, 6, …)",
        ),
        (
            "hello\n" * 6 + "SYSTEM: x\nDESCRIPTION: d\nRUBRIC\nPass conditions:\n- a\n",
            "p.md:1:1: prompt: line not sent to the judge, text before the first section: 'hello' "
            "(and 5 more, at line 2, 3, 4, 5, 6)",
        ),
        (
            "SYSTEM: x\nDESCRIPTION:\nRUBRIC\nPass conditions:\n- a\n",
            "p.md:2:1: DESCRIPTION: section DESCRIPTION is empty",
        ),
        (
            "SYSTEM: x\nBEHAVIOR: b\nRUBRIC\nPass conditions:\n- a\n",
            "p.md:3:1: DESCRIPTION: missing section DESCRIPTION, written `DESCRIPTION:` or `## DESCRIPTION`",
        ),
        (
            "SYSTEM: x\n",
            "p.md:1:1: DESCRIPTION: missing section DESCRIPTION, written `DESCRIPTION:` or `## DESCRIPTION` "
            "(and 1 more, at line 1)",
        ),
        (
            "x" * 61 + "\nSYSTEM: x\n",
            "p.md:1:1: prompt: line not sent to the judge, text before the first section: '"
            + "x" * 59
            + "…' (and 2 more, at line 2, 2)",
        ),
        (
            "hello\n" * 7 + "SYSTEM: x\nDESCRIPTION: d\nRUBRIC\nPass conditions:\n- a\n",
            "p.md:1:1: prompt: line not sent to the judge, text before the first section: 'hello' "
            "(and 6 more, at line 2, 3, 4, 5, 6, …)",
        ),
        (
            "SYSTEM: x\nDESCRIPTION: d\n",
            "p.md:2:1: RUBRIC: missing section Pass conditions, written `Pass conditions (all must be "
            "satisfied):` or `### Pass conditions`; the rubric needs Pass conditions or Automatic fail "
            "(`Automatic fail if any of the following are true:` or `### Automatic fail`)",
        ),
        (
            "",
            "p.md:1:1: SYSTEM: missing section SYSTEM, written `SYSTEM: <instructions>` or `# SYSTEM` "
            "(and 2 more, at line 1, 1)",
        ),
        (
            "SYSTEM: x\nDESCRIPTION: d\nRUBRIC\nUncertainty policy: be strict\nPass conditions:\n",
            "p.md:5:1: RUBRIC: section Pass conditions is empty; the rubric needs Pass conditions or "
            "Automatic fail (`Automatic fail if any of the following are true:` or `### Automatic fail`)",
        ),
    ],
    ids=[
        "long-line-cut",
        "sixty-characters-whole",
        "many-more",
        "six-problems",
        "empty",
        "missing",
        "missing-at-end",
        "sixty-one-characters-cut",
        "seven-problems",
        "no-rubric-list",
        "empty-file",
        "empty-pass-conditions-after-another-heading",
    ],
)
def test_a_prompts_first_problem_names_how_many_more_and_where(text: str, first_line: str) -> None:
    with pytest.raises(SpecError) as raised:
        check_prompt(parse_prompt(text, "p.md"))
    assert str(raised.value).split("\n")[0] == first_line


def test_a_rubric_file_and_where_its_benchmarks_are_named(tmp_path: Path) -> None:
    (tmp_path / "R.yaml").write_text("# r\ncode: R-1\nbenchmarks:\n  - A\n  - B\n")
    rubric = load_rubric(tmp_path / "R.yaml", "rubrics/R.yaml")
    assert (rubric.spec.code, rubric.spec.benchmarks) == ("R-1", ["A", "B"])
    assert rubric.location == Location("rubrics/R.yaml", 2, 1)
    assert rubric.benchmark_locations == (Location("rubrics/R.yaml", 4, 5), Location("rubrics/R.yaml", 5, 5))
    (tmp_path / "T.yaml").write_text("benchmarks: [A]\nlabel: t\n  # c\ncode:   T-1\n")
    assert load_rubric(tmp_path / "T.yaml", "rubrics/T.yaml").location == Location("rubrics/T.yaml", 4, 1)
    (tmp_path / "S.yaml").write_text("- a\n")
    with pytest.raises(SpecError) as raised:
        load_rubric(tmp_path / "S.yaml", "rubrics/S.yaml")
    assert str(raised.value) == (
        "rubrics/S.yaml:1:1: <file>: expected a mapping of fields, got a list\n"
        "  hint: a rubric file starts with 'code: ...'"
    )


def test_nesting_past_what_libyaml_scans_is_counted_on_pythons_tokens() -> None:
    from pytest_llmjudge.suite.yamlsrc import load_yaml

    # libyaml's scanner stops at its own limit before our parser-level count: the tokens decide,
    # and find the same value: the first past 100 levels, the top-level mapping one of them
    for opening, closing, col in (("[", "]", 103), ("{b: ", "}", 400), ("[{b: ", "}]", 250)):
        text = "a: " + opening * 10_000 + "1" + closing * 10_000 + "\n"
        with pytest.raises(SpecError) as raised:
            load_yaml(text, "deep.yaml")
        assert str(raised.value.location) == f"deep.yaml:1:{col}"
        assert raised.value.message == "values nest more than 100 levels deep"
    # closed values give their level back: 150 closed mappings, then the 99th bracket of a run
    text = "a: [" + "{b: 1}, " * 150 + "[" * 10_000 + "1" + "]" * 10_001 + "\n"
    with pytest.raises(SpecError) as raised:
        load_yaml(text, "deep.yaml")
    assert str(raised.value.location) == f"deep.yaml:1:{len('a: [') + 150 * len('{b: 1}, ') + 99}"
    # a syntax error before the 101st level is reported as such, whichever scanner met it
    with pytest.raises(SpecError) as raised:
        load_yaml("a: [[ @x" + "[" * 10_000 + "\n", "at.yaml")
    assert str(raised.value.location) == "at.yaml:1:7"
    assert raised.value.message.startswith("invalid YAML: found character '@'")


def test_a_few_shot_examples_file_is_read_as_a_cases_file(tmp_path: Path) -> None:
    from pytest_llmjudge.suite.files import load_cases

    root = tmp_path / "project"
    (root / "benchmarks").mkdir(parents=True)
    (root / "benchmarks/shots.yaml").write_text(
        "cases:\n  - id: s1\n    inputs: {q: x}\n    candidate_output: a\n"
    )
    (root / "benchmarks/shots.jsonl").write_text(
        '{"id": "j1", "inputs": {"q": "x"}, "candidate_output": "a"}\n'
    )
    (tmp_path / "outside.yaml").write_text("- id: o1\n  inputs: {q: x}\n  candidate_output: a\n")
    at = Location("benchmarks/B.yaml", 7, 5)
    field = "judge.few_shot.examples_file"
    assert [c.id for c in load_cases("benchmarks/shots.yaml", at, root, False, field)] == ["s1"]
    assert [c.id for c in load_cases("benchmarks/shots.jsonl", at, root, False, field)] == ["j1"]
    with pytest.raises(SpecError) as raised:
        load_cases("../outside.yaml", at, root, False, field)
    assert (raised.value.location, raised.value.field) == (at, field)
    assert [c.id for c in load_cases("../outside.yaml", at, root, True, field)] == ["o1"]


def test_an_offset_is_an_editor_line_and_column() -> None:
    from pytest_llmjudge.suite.text import position

    text = "ab\ncd\n\nxyz"
    assert [position(text, offset) for offset in (0, 1, 3, 4, 6, 7, 9)] == [
        (1, 1),
        (1, 2),
        (2, 1),
        (2, 2),
        (3, 1),
        (4, 1),
        (4, 3),
    ]


@pytest.mark.parametrize(
    ("text", "col", "problem"),
    [
        ("a: [1, 2", 4, "expected ',' or ']', but got '<stream end>' (while parsing a flow sequence)"),
        ("a: [1, 2\n", 4, "expected ',' or ']', but got '<stream end>' (while parsing a flow sequence)"),
        ("a: {b: 1", 4, "expected ',' or '}', but got '<stream end>' (while parsing a flow mapping)"),
        ("a: 'x", 4, "found unexpected end of stream (while scanning a quoted scalar)"),
        ("a: b: c\n", 5, "mapping values are not allowed here"),
    ],
)
def test_a_yaml_syntax_error_is_placed_where_it_is_fixed(text: str, col: int, problem: str) -> None:
    """An unclosed bracket or quote at the end of the file, last newline or not: at the bracket."""
    from pytest_llmjudge.suite.yamlsrc import load_yaml

    with pytest.raises(SpecError) as raised:
        load_yaml(text, "f.yaml")
    assert str(raised.value.location) == f"f.yaml:1:{col}"
    assert raised.value.message == f"invalid YAML: {problem}"
    assert raised.value.hint == "check indentation, colons and quotes on this line and the one above"


def test_a_yaml_error_without_a_place_is_at_the_files_start() -> None:
    import yaml

    from pytest_llmjudge.suite.yamlsrc import _Lines, _syntax_error

    nowhere = _Lines("a: 1\n")
    unmarked = _syntax_error(yaml.MarkedYAMLError(problem="bad"), "a: 1\n", "f.yaml", nowhere)
    assert (str(unmarked.location), unmarked.message) == ("f.yaml:1:1", "invalid YAML: bad")
    context_only = _syntax_error(yaml.MarkedYAMLError(context="while reading"), "a: 1\n", "f.yaml", nowhere)
    assert context_only.message == "invalid YAML: while reading (while reading)"  # PyYAML's own text
    other = _syntax_error(yaml.YAMLError("boom"), "a: 1\n", "f.yaml", nowhere)
    assert (str(other.location), other.field, other.message, other.hint) == (
        "f.yaml:1:1",
        "",
        "invalid YAML: boom",
        "fix the YAML syntax",
    )


def test_a_value_yaml_cannot_read_is_quoted_cut_and_explained() -> None:
    from pytest_llmjudge.suite.yamlsrc import load_yaml

    with pytest.raises(SpecError) as raised:
        load_yaml("a:\n  b: " + "1" * 5000 + "\n", "f.yaml")
    assert (str(raised.value.location), raised.value.field) == ("f.yaml:2:6", "a.b")
    assert raised.value.message == (
        f"cannot read '{'1' * 38}… as a whole number: Exceeds the limit (4300 digits) for integer "
        "string conversion: value has 5000 digits"
    )
    assert raised.value.hint == "quote it to keep it as text"
    with pytest.raises(SpecError) as raised:
        load_yaml("a: 2024-02-30\n", "f.yaml")
    assert raised.value.message == "cannot read '2024-02-30' as a date: day is out of range for month"


PANEL_HEAD = "code: B\nlabel: b\nthreshold: 1.0\nevaluator_type: llm_judge\nllm_prompt_file: p.md\njudge:\n"


@pytest.mark.parametrize(
    ("judge", "message"),
    [
        (
            "  panel:\n    - openai:a\n    - openai:b\n    - openai:a\n",
            "B.yaml:10:7: judge.panel: openai:a is named twice (its verdicts would count twice)\n"
            "  hint: list each judge once, two or more",
        ),
        (
            "  panel:\n    - openai:a\n",
            "B.yaml:7:3: judge.panel: a panel needs at least 2 judges, got 1\n"
            "  hint: list each judge once, two or more",
        ),
        (
            "  model: openai:x\n  panel: [openai:a, openai:b]\n",
            "B.yaml:7:3: judge.model: a benchmark has one judge ('model') or a panel ('panel'), not both\n"
            "  hint: remove 'model:', or 'panel:'",
        ),
        (
            "  panel: [openai:a, openai:b]\n  min_members: 3\n",
            "B.yaml:8:3: judge.min_members: 3 judges must answer, but the panel has 2\n"
            "  hint: use a number from 1 to 2 (default: a majority, 2)",
        ),
    ],
    ids=["named-twice-at-the-last-member", "one-member", "model-and-panel", "min-members-too-many"],
)
def test_a_benchmark_panels_mistake_is_at_its_line(judge: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("SYSTEM: x\n\nRUBRIC\n\nPass conditions:\n- ok\n")
    (tmp_path / "B.yaml").write_text(PANEL_HEAD + judge + "cases:\n  - {id: c, candidate_output: x}\n")
    with pytest.raises(SpecError) as raised:
        load_benchmark(tmp_path / "B.yaml", "B.yaml", tmp_path)
    assert str(raised.value) == message


IMPORT_HINT = "name a callable as 'package.module:function' (the module importable from the rootdir)"


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (
            "task: not a path\n",
            f"B.yaml:6:1: task: 'not a path' is not an import path\n  hint: {IMPORT_HINT}",
        ),
        (
            "task: '" + "x" * 70 + "'\n",
            f"B.yaml:6:1: task: '{'x' * 58}… is not an import path\n  hint: {IMPORT_HINT}",
        ),
        (
            "task: {model: openai:x}\n",
            "B.yaml:6:1: task.prompt_file: required field is missing\n"
            "  hint: add 'prompt_file:' to this entry",
        ),
    ],
    ids=["not-an-import-path", "long-value-cut", "model-task-without-its-prompt"],
)
def test_a_benchmarks_task_is_an_import_path_or_a_model_task(task: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("SYSTEM: x\n\nRUBRIC\n\nPass conditions:\n- ok\n")
    head = PANEL_HEAD.removesuffix("judge:\n")
    (tmp_path / "B.yaml").write_text(head + task + "cases:\n  - {id: c, candidate_output: x}\n")
    with pytest.raises(SpecError) as raised:
        load_benchmark(tmp_path / "B.yaml", "B.yaml", tmp_path)
    assert str(raised.value) == message


NO_CASES_HINT = "add cases, or write 'no_cases: true' if the benchmark has none on purpose"
CALIBRATION = (
    '{"id": "k1", "candidate_output": "x", "label": "pass"}\n',
    '{"id": "k2", "candidate_output": "y", "label": "fail"}\n',
)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            "threshold: 1.0\nno_cases: true\ncases:\n  - {id: c, candidate_output: x}\n",
            "B.yaml:6:1: no_cases: 'no_cases: true' but B has 1 case\n"
            "  hint: remove 'no_cases: true', or the cases",
        ),
        (
            "threshold: 1.0\nno_cases: true\n"
            "cases: [{id: c, candidate_output: x}, {id: d, candidate_output: x}]\n",
            "B.yaml:6:1: no_cases: 'no_cases: true' but B has 2 cases\n"
            "  hint: remove 'no_cases: true', or the cases",
        ),
        (
            "criticality: hard_gate\ncases_file: empty.jsonl\n",
            "B.yaml:6:1: cases_file: cases file 'empty.jsonl' holds no cases, and B is a hard gate: its gate "
            f"would pass with nothing judged\n  hint: {NO_CASES_HINT}",
        ),
        (
            "threshold: 1.0\ncases: []\n",
            "B.yaml:6:1: cases: 'cases' lists no cases, and B is gated at threshold 1: its gate would pass "
            f"with nothing judged\n  hint: {NO_CASES_HINT}",
        ),
        (
            "threshold: 1.0\ncalibration_file: unlabelled.jsonl\ncases:\n  - {id: c, candidate_output: x}\n",
            "unlabelled.jsonl:2:1: label: calibration case 'k2' has no human label\n"
            "  hint: add 'label: pass' or 'label: fail' (calibration cases measure the judge against it)",
        ),
        (
            "threshold: 1.0\ncalibration_file: twice.jsonl\ncases:\n  - {id: c, candidate_output: x}\n",
            "twice.jsonl:2:1: id: duplicate case id 'k1' (first at twice.jsonl:1:1)\n"
            "  hint: case ids must be unique within a benchmark",
        ),
    ],
    ids=[
        "no-cases-but-one",
        "no-cases-but-two",
        "empty-cases-file-hard-gate",
        "empty-list-gated",
        "unlabelled",
        "twice",
    ],
)
def test_a_benchmarks_cases_and_calibration_cases_are_checked(
    fields: str, message: str, tmp_path: Path
) -> None:
    (tmp_path / "p.md").write_text("SYSTEM: x\n\nRUBRIC\n\nPass conditions:\n- ok\n")
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "unlabelled.jsonl").write_text(CALIBRATION[0] + '{"id": "k2", "candidate_output": "y"}\n')
    (tmp_path / "twice.jsonl").write_text(CALIBRATION[0] + CALIBRATION[0].replace('"pass"', '"fail"'))
    head = "code: B\nlabel: b\nevaluator_type: llm_judge\nllm_prompt_file: p.md\n"
    (tmp_path / "B.yaml").write_text(head + fields)
    with pytest.raises(SpecError) as raised:
        load_benchmark(tmp_path / "B.yaml", "B.yaml", tmp_path)
    assert str(raised.value) == message


def test_no_cases_on_purpose_and_labelled_calibration_cases_load(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("SYSTEM: x\n\nRUBRIC\n\nPass conditions:\n- ok\n")
    (tmp_path / "cal.jsonl").write_text("".join(CALIBRATION))
    head = "code: B\nlabel: b\nevaluator_type: llm_judge\nllm_prompt_file: p.md\n"
    for fields in ("threshold: 0.5\nno_cases: true\ncases: []\n", "cases: []\n"):  # on purpose; no gate
        (tmp_path / "B.yaml").write_text(head + fields)
        assert load_benchmark(tmp_path / "B.yaml", "B.yaml", tmp_path).cases == ()
    (tmp_path / "B.yaml").write_text(
        head + "calibration_file: cal.jsonl\ncases:\n  - {id: c, candidate_output: x}\n"
    )
    benchmark = load_benchmark(tmp_path / "B.yaml", "B.yaml", tmp_path)
    assert [(c.id, c.spec.label) for c in benchmark.calibration_cases] == [("k1", "pass"), ("k2", "fail")]
    assert [c.id for c in benchmark.cases] == ["c"]


def test_a_value_in_a_message_is_its_escaped_repr_cut_to_the_limit() -> None:
    from pytest_llmjudge.suite.text import shown

    assert shown("a" * 78, 80) == "'" + "a" * 78 + "'"  # exactly the limit: whole
    assert shown("a" * 79, 80) == "'" + "a" * 78 + "…"
    assert shown({i: i for i in range(100)}, 12) == "{0: 0, 1: 1…"  # a big mapping is cut first
    assert shown(list(range(100)), 12) == "[0, 1, 2, 3…"
    assert shown(tuple(range(100)), 12) == "(0, 1, 2, 3…"
    assert shown(10**5000) == "<int>"  # too long for Python to print
    assert shown("x\x00y") == "'x\\x00y'"


def test_yaml_keys_tags_anchors_and_an_empty_file_are_placed() -> None:
    from pytest_llmjudge.suite.yamlsrc import load_yaml

    assert load_yaml("", "f.yaml").where(("code",)) == Location("f.yaml", 1, 1)  # nothing to point at
    for text in ("a: !foo {b: 1}\n", "a: !foo [1]\n"):
        with pytest.raises(SpecError) as raised:
            load_yaml(text, "f.yaml")
        assert str(raised.value) == (
            "f.yaml:1:4: a: unsupported YAML tag '!foo'\n"
            "  hint: only plain YAML is loaded (safe loader); remove the tag"
        )
    with pytest.raises(SpecError) as raised:
        load_yaml("a:\n  b: {2024-02-30: x}\n", "f.yaml")  # a key YAML cannot read, named by its mapping
    assert (str(raised.value.location), raised.value.field) == ("f.yaml:2:7", "a.b")
    with pytest.raises(SpecError) as raised:
        load_yaml("? [a, b]\n: c\n", "f.yaml")
    complex_key = "f.yaml:1:3: <file>: mapping keys must be plain scalars\n  hint: quote the key"
    assert str(raised.value) == complex_key
    # a merged mapping's keys point where they are written: the anchor's, or the mapping's own
    merged = load_yaml("base: &b {x: 1}\nitem:\n  <<: *b\n  y: 2\n", "f.yaml")
    assert merged.data == {"base": {"x": 1}, "item": {"y": 2, "x": 1}}
    assert [str(merged.where(("item", key))) for key in ("x", "y")] == ["f.yaml:1:11", "f.yaml:4:3"]


def test_a_key_that_is_no_plain_scalar_is_refused_and_a_number_key_is_placed() -> None:
    from pytest_llmjudge.suite.yamlsrc import load_yaml

    cases = (("2024-01-01: x\n", "f.yaml:1:1: <file>"), ("a:\n  !!binary aGk=: x\n", "f.yaml:2:3: a"))
    for text, where in cases:
        with pytest.raises(SpecError) as raised:
            load_yaml(text, "f.yaml")
        assert str(raised.value) == f"{where}: mapping keys must be plain scalars\n  hint: quote the key"
    numbered = load_yaml("a:\n  1: x\n  b: y\n", "f.yaml")
    assert numbered.data == {"a": {1: "x", "b": "y"}}
    assert str(numbered.where(("a", "1"))) == "f.yaml:2:3"  # paths name keys as text


def test_a_mappings_own_key_wins_over_a_merged_one_and_is_placed_there() -> None:
    from pytest_llmjudge.suite.yamlsrc import load_yaml

    merged = load_yaml("base: &b {x: 1, z: 3}\nitem:\n  <<: *b\n  x: 2\n", "f.yaml")
    assert merged.data["item"] == {"x": 2, "z": 3}
    assert [str(merged.where(("item", key))) for key in ("x", "z")] == ["f.yaml:4:3", "f.yaml:1:17"]
    nested = load_yaml("base: &b {x: {y: 1}}\nitem:\n  x: {y: 2}\n  <<: *b\n", "f.yaml")
    assert nested.data["item"] == {"x": {"y": 2}} and str(nested.where(("item", "x", "y"))) == "f.yaml:3:7"


def test_a_calibration_file_outside_the_root_and_a_two_judge_panel(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "p.md").write_text("SYSTEM: x\n\nRUBRIC\n\nPass conditions:\n- ok\n")
    (tmp_path / "cal.jsonl").write_text("".join(CALIBRATION))
    head = "code: B\nlabel: b\nevaluator_type: llm_judge\nllm_prompt_file: p.md\n"
    cases = "cases:\n  - {id: c, candidate_output: x}\n"
    (root / "B.yaml").write_text(head + "calibration_file: ../cal.jsonl\n" + cases)
    with pytest.raises(SpecError) as raised:
        load_benchmark(root / "B.yaml", "B.yaml", root)
    assert (str(raised.value.location), raised.value.field) == ("B.yaml:5:1", "calibration_file")
    assert len(load_benchmark(root / "B.yaml", "B.yaml", root, allow_outside=True).calibration_cases) == 2
    (root / "B.yaml").write_text(head + "judge:\n  panel:\n    - openai:a\n    - openai:a\n" + cases)
    with pytest.raises(SpecError) as raised:
        load_benchmark(root / "B.yaml", "B.yaml", root)
    assert str(raised.value.location) == "B.yaml:8:7"  # the second, a panel of two
    (root / "B.yaml").write_text(head + "judge:\n  panel: [openai:a, openai:b]\n  min_members: 2\n" + cases)
    judge = load_benchmark(root / "B.yaml", "B.yaml", root).spec.judge
    assert judge is not None and judge.min_members == 2  # all of them may be required
