"""The file format (unit level): everything BENCHMARK_FORMAT.md describes loads as written."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_llmjudge.suite import files as spec
from pytest_llmjudge.suite.errors import Location, SpecError, nearest
from pytest_llmjudge.suite.yamlsrc import decode, dotted, load_yaml

REPO = Path(__file__).resolve().parents[1]


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(root: Path, relative: str, text: str) -> spec.Benchmark:
    return spec.load_benchmark(write(root, relative, text), relative, root)


def error(root: Path, relative: str, text: str) -> str:
    with pytest.raises(SpecError) as caught:
        load(root, relative, text)
    return caught.value.render()


@pytest.mark.parametrize(
    "path",
    sorted(p.relative_to(REPO).as_posix() for p in (REPO / "benchmarks").rglob("*.yaml") if p.stem.isupper()),
)
def test_repo_examples_load(path: str) -> None:
    benchmark = spec.load_benchmark(REPO / path, path, REPO)
    assert path.endswith(f"/{benchmark.code}.yaml")
    assert benchmark.location == Location(path, benchmark.location.line, 1)


def test_repo_rubric_loads() -> None:
    rubric = spec.load_rubric(REPO / "rubrics/A.yaml", "rubrics/A.yaml")
    assert rubric.spec.aggregation_method == "WEIGHTED_AVERAGE"
    assert rubric.spec.benchmarks == ["A-MED1", "A-NEG1", "A-FMT1", "A-VIT1"]  # `# comments` dropped
    assert rubric.spec.evaluation_guidelines is not None
    assert rubric.spec.evaluation_guidelines.critical_requirements == [
        "Negated findings never appear as present"
    ]


def test_real_world_benchmark_loads_as_written(tmp_path: Path) -> None:
    write(tmp_path, "evaluators/llm-judge/medications_prompt.md", "SYSTEM: x\n")
    benchmark = load(
        tmp_path,
        "benchmarks/a-component/A-MED1.yaml",
        """\
        # A-MED1: medications administered during the encounter.
        # Owner: documentation quality.
        code: A-MED1
        parent_rubric: A
        label: Medications extracted correctly
        concept: >
          The copilot's medication list contains every medication administered
          during the encounter.
        weight: 0.4
        threshold: 0.9
        criticality: hard_gate
        scoring_scale:
          min_value: 0.0
          max_value: 1.0
          normalization_formula: "x"
          descriptions:
            1.0: every case passes
            0.90: release bar
            0: no case passes
        inclusion_criteria: >
          Apply when the encounter records administered medications. Flag if a medication is missing.
        exclusion_criteria:
          - Do not apply when the narrative records only home medications.
          - Do not use for medication reconciliation.
        examples:
          - "Aspirin 324 mg given PO but output lists no aspirin."
          - "POSITIVE example: all medications listed."
        evaluator_type: hybrid
        llm_prompt_file: evaluators/llm-judge/medications_prompt.md
        metric: {implementation: judge, version: 2}
        notes: Reviewed quarterly.
        checks:
          - type: is_instance
            value: dict
        """,
    )
    s = benchmark.spec
    assert s.scoring_scale is not None and s.scoring_scale.descriptions == {
        1.0: "every case passes",
        0.9: "release bar",
        0.0: "no case passes",
    }
    assert (
        s.concept
        == "The copilot's medication list contains every medication administered during the encounter.\n"
    )
    assert s.inclusion_criteria == (
        "Apply when the encounter records administered medications. Flag if a medication is missing."
    )
    assert s.exclusion_criteria == [
        "Do not apply when the narrative records only home medications.",
        "Do not use for medication reconciliation.",
    ]
    assert (s.criticality, s.evaluator_type, s.weight, s.threshold) == ("hard_gate", "hybrid", 0.4, 0.9)
    assert s.metric == {"implementation": "judge", "version": 2}
    assert benchmark.prompt_path == tmp_path / "evaluators/llm-judge/medications_prompt.md"
    assert benchmark.cases == ()
    assert benchmark.location == Location("benchmarks/a-component/A-MED1.yaml", 3, 1)


def test_catch_all_benchmark_with_nulls_loads(tmp_path: Path) -> None:
    benchmark = load(
        tmp_path,
        "benchmarks/s/NONE.yaml",
        """\
        code: NONE
        parent_rubric: null
        threshold: null
        weight: 0.0
        evaluator_type: manual_sme
        """,
    )
    assert (benchmark.spec.parent_rubric, benchmark.spec.threshold, benchmark.spec.weight) == (
        None,
        None,
        0.0,
    )
    assert benchmark.spec.evaluator_type == "manual_sme"


@pytest.mark.parametrize("kind", ["code", "llm_judge", "hybrid", "manual_sme"])
def test_every_evaluator_type_loads(tmp_path: Path, kind: str) -> None:
    benchmark = load(
        tmp_path, "benchmarks/X.yaml", f"code: X\nconcept: c\ninclusion_criteria: i\nevaluator_type: {kind}\n"
    )
    assert benchmark.spec.evaluator_type == kind


def test_criteria_as_string_or_list(tmp_path: Path) -> None:
    as_string = load(tmp_path, "benchmarks/S.yaml", "code: S\ninclusion_criteria: Apply when x. Flag if y.\n")
    as_list = load(
        tmp_path, "benchmarks/L.yaml", "code: L\ninclusion_criteria: [Apply when x. Flag if y., Flag z.]\n"
    )
    assert as_string.spec.inclusion_criteria == "Apply when x. Flag if y."
    assert as_list.spec.inclusion_criteria == ["Apply when x. Flag if y.", "Flag z."]


def test_inline_cases_keep_their_lines(tmp_path: Path) -> None:
    benchmark = load(
        tmp_path,
        "benchmarks/C.yaml",
        """\
        code: C
        concept: c
        cases:
          - id: denies-chest-pain
            source_narrative: "Pt denies chest pain or SOB."
            ground_truth: {chest_pain: false}
            candidate_output: {chest_pain: true}
            inputs: {scenario: medical}
            label: fail
            metadata: {source: trace-0192}
          - id: plain.text_1
            candidate_output: just text
        """,
    )
    first, second = benchmark.cases
    assert first.location == Location("benchmarks/C.yaml", 4, 5)
    assert first.spec.ground_truth == {"chest_pain": False}
    assert first.spec.inputs == {"scenario": "medical"}
    assert (first.spec.label, first.spec.metadata) == ("fail", {"source": "trace-0192"})
    assert (second.id, second.spec.candidate_output, second.location.line) == (
        "plain.text_1",
        "just text",
        11,
    )


def test_cases_from_jsonl_file_keep_their_lines(tmp_path: Path) -> None:
    write(
        tmp_path,
        "data/C.jsonl",
        '{"id": "a", "candidate_output": "x"}\n\n'
        '{"id": "b", "candidate_output": {"k": 1}, "ground_truth": "y"}\n',
    )
    benchmark = load(tmp_path, "benchmarks/C.yaml", "code: C\nconcept: c\ncases_file: data/C.jsonl\n")
    assert [(c.id, c.location) for c in benchmark.cases] == [
        ("a", Location("data/C.jsonl", 1, 1)),
        ("b", Location("data/C.jsonl", 3, 1)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "- id: a\n  candidate_output: x\n- id: b\n  candidate_output: y\n",
        "# cases of C\ncases:\n  - id: a\n    candidate_output: x\n  - id: b\n    candidate_output: y\n",
    ],
    ids=["list", "mapping"],
)
def test_cases_from_yaml_file(tmp_path: Path, text: str) -> None:
    write(tmp_path, "data/C.yaml", text)
    benchmark = load(tmp_path, "benchmarks/C.yaml", "code: C\nconcept: c\ncases_file: data/C.yaml\n")
    assert [c.id for c in benchmark.cases] == ["a", "b"]
    assert benchmark.cases[1].location.path == "data/C.yaml"
    assert (
        benchmark.cases[1].location.line
        == text.splitlines().index(next(x for x in text.splitlines() if "id: b" in x)) + 1
    )


def test_inline_cases_and_cases_file_combine(tmp_path: Path) -> None:
    write(tmp_path, "data/C.jsonl", '{"id": "from-file", "candidate_output": "x"}\n')
    benchmark = load(
        tmp_path,
        "benchmarks/C.yaml",
        "code: C\nconcept: c\ncases_file: data/C.jsonl\ncases:\n  - {id: inline, candidate_output: y}\n",
    )
    assert [c.id for c in benchmark.cases] == ["inline", "from-file"]


def test_judge_settings_load(tmp_path: Path) -> None:
    benchmark = load(
        tmp_path,
        "benchmarks/J.yaml",
        "code: J\nconcept: c\njudge:\n  model: openai:gpt-4o\n  temperature: 0\n  prompt_style: short_cot\n",
    )
    assert benchmark.spec.judge == spec.JudgeSettings(
        model="openai:gpt-4o", temperature=0, prompt_style="short_cot"
    )


@pytest.mark.parametrize("method", ["WEIGHTED_AVERAGE", "MINIMUM", "MAXIMUM", "MEAN"])
def test_rubric_aggregation_methods(tmp_path: Path, method: str) -> None:
    path = write(
        tmp_path, "rubrics/R.yaml", f"code: R\naggregation_method: {method}\nbenchmarks:\n  - A-1  # one\n"
    )
    assert spec.load_rubric(path, "rubrics/R.yaml").spec.aggregation_method == method


def test_rubric_errors_point_at_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "rubrics/R.yaml", "code: R\naggregation_method: AVERAGE\nbenchmarks: [A-1]\n")
    with pytest.raises(SpecError) as caught:
        spec.load_rubric(path, "rubrics/R.yaml")
    assert caught.value.render() == (
        "rubrics/R.yaml:2:1: aggregation_method: 'AVERAGE' is not one of 'WEIGHTED_AVERAGE', 'MINIMUM', "
        "'MAXIMUM' or 'MEAN'\n  hint: did you mean 'WEIGHTED_AVERAGE'?"
    )


def test_unknown_key_far_from_any_known_key_lists_them(tmp_path: Path) -> None:
    message = error(tmp_path, "benchmarks/U.yaml", "code: U\nconcept: c\nzzz: 1\n")
    assert message.startswith("benchmarks/U.yaml:3:1: zzz: unknown key 'zzz'\n  hint: known keys: code, ")


def test_errors_have_one_line_and_one_hint(tmp_path: Path) -> None:
    message = error(tmp_path, "benchmarks/U.yaml", "code: U\nconcept: c\nweight: 2\nthreshold: 3\n")
    head, hint = message.split("\n")
    assert head == (
        "benchmarks/U.yaml:3:1: weight: Input should be less than or equal to 1 (got 2) (and 1 more problem)"
    )
    assert hint == "  hint: use a number in range"


def test_merge_keys_let_the_mapping_override(tmp_path: Path) -> None:
    benchmark = load(
        tmp_path,
        "benchmarks/M.yaml",
        """\
        code: M
        concept: c
        cases:
          - &base {id: a, source_narrative: shared, candidate_output: x}
          - <<: *base
            id: b
            candidate_output: y
        """,
    )
    merged = benchmark.cases[1].spec
    assert (merged.id, merged.source_narrative, merged.candidate_output) == ("b", "shared", "y")


def test_yaml_locations_fall_back_to_the_nearest_parent() -> None:
    doc = load_yaml("code: X\ncases:\n  - id: a\n    inputs:\n      k: v\n", "f.yaml")
    assert doc.where(("cases", 0, "inputs", "k")) == Location("f.yaml", 5, 7)
    assert doc.where(("cases", 0, "missing", "deeper")) == Location("f.yaml", 3, 5)
    assert doc.where(("nothing",)) == Location("f.yaml", 1, 1)
    assert dotted(("cases", 2, "id")) == "cases[2].id"


def test_decode_accepts_a_utf8_bom() -> None:
    assert decode("\ufeffcode: X\n".encode(), "f.yaml") == "code: X\n"


def test_nearest_only_suggests_likely_typos() -> None:
    assert nearest("tresholds", ["threshold", "weight"]) == "threshold"
    assert nearest("zzz", ["threshold", "weight"]) is None


def test_spec_error_render() -> None:
    error = SpecError(Location("b.yaml", 3, 5), "cases[0].id", "bad id", "rename it")
    assert error.render() == "b.yaml:3:5: cases[0].id: bad id\n  hint: rename it"
    assert (
        SpecError(Location("b.yaml", 1, 1), "", "file is empty").render()
        == "b.yaml:1:1: <file>: file is empty"
    )


def test_files_outside_the_root_load_only_when_allowed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(tmp_path, "shared/negation_prompt.md", "SYSTEM: x\n")
    write(tmp_path, "shared/cases.jsonl", '{"id": "a", "candidate_output": "x"}\n')
    text = """\
        code: A-OUT1
        concept: c
        llm_prompt_file: ../shared/negation_prompt.md
        cases_file: ../shared/cases.jsonl
        """
    assert "cases_file: '../shared/cases.jsonl' is outside the repository root" in error(
        root, "benchmarks/A-OUT1.yaml", text
    )
    benchmark = spec.load_benchmark(root / "benchmarks/A-OUT1.yaml", "A-OUT1.yaml", root, allow_outside=True)
    assert benchmark.prompt_path is not None and benchmark.prompt_path.read_text() == "SYSTEM: x\n"
    assert [case.id for case in benchmark.cases] == ["a"]


def test_empty_yaml_cases_file_holds_no_cases(tmp_path: Path) -> None:
    write(tmp_path, "data/A-NIL1.yaml", "# traces to come\n")
    benchmark = load(
        tmp_path, "benchmarks/A-NIL1.yaml", "code: A-NIL1\nconcept: c\ncases_file: data/A-NIL1.yaml\n"
    )
    assert benchmark.cases == ()
