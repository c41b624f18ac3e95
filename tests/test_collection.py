"""Collection: which files are benchmarks, node ids, and pytest's selection and reporting options."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import GOOD, Suite

REPO = Path(__file__).resolve().parents[1]


def two_cases(code: str, second: str = "hello again") -> str:
    return (
        f"code: {code}\nconcept: The output says hello.\ninclusion_criteria: Flag if it does not say hello.\n"
        "cases:\n  - id: first\n    candidate_output: hello\n"
        f"  - id: second\n    candidate_output: {second}\n"
    )


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_every_benchmark_below_a_path_is_collected_and_other_files_left_alone(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.write("benchmarks/b/deep/B-TWO.yml", two_cases("B-TWO"))
    suite.write("benchmarks/b/neg_simple.yaml", "code: B-LOW\nconcept: lowercase name, declares a code\n")
    suite.write("benchmarks/AGENTS.md", "# Benchmarks\ncode: this is Markdown\n")
    suite.write("benchmarks/FIELD_SPECS.md", "| field | type |\n")
    suite.write("benchmarks/notes.yaml", "todo: [not valid yaml\n")
    suite.write(
        "benchmarks/a/A-OK1-cases.yaml", "# cases kept beside the benchmark\n- id: x\n  candidate_output: y\n"
    )
    suite.write("benchmarks/a/README.txt", "code: not YAML\n")
    result = suite.run("benchmarks", "--co", "-q")
    assert collected(result) == [
        "benchmarks/a/A-OK1.yaml::A-OK1::prompt",
        "benchmarks/a/A-OK1.yaml::A-OK1::says-hello",
        "benchmarks/b/deep/B-TWO.yml::B-TWO::prompt",
        "benchmarks/b/deep/B-TWO.yml::B-TWO::first",
        "benchmarks/b/deep/B-TWO.yml::B-TWO::second",
        "benchmarks/b/neg_simple.yaml::B-LOW::prompt",
    ]
    assert result.ret == 0


def test_plain_pytest_tests_collects_no_benchmark(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.write("tests/test_unit.py", "def test_unit():\n    pass\n")
    suite.write(
        "tests/data/A-FIX1.yaml", "code: A-FIX1\nconcept: a fixture file that looks like a benchmark\n"
    )
    result = suite.run("tests", "--co", "-q")
    assert collected(result) == ["tests/test_unit.py::test_unit"]
    result = suite.run("tests")
    result.assert_outcomes(passed=1)
    assert suite.judge_calls() == []


def test_ini_option_sets_the_benchmark_folders(suite: Suite) -> None:
    suite.pytester.makeini("[pytest]\nllmjudge_paths =\n    evals\n    judges\n")
    suite.benchmark("A-OK1", GOOD, folder="evals/a")
    suite.benchmark("J-1", "code: J-1\nconcept: c\n", folder="judges")
    suite.benchmark("B-1", "code: B-1\nconcept: c\n", folder="benchmarks")
    result = suite.run("--co", "-q")
    assert collected(result) == [
        "evals/a/A-OK1.yaml::A-OK1::prompt",
        "evals/a/A-OK1.yaml::A-OK1::says-hello",
        "judges/J-1.yaml::J-1::prompt",
    ]
    assert suite.run("benchmarks", "--co").ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_keyword_selection(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.benchmark("B-TWO", two_cases("B-TWO"))
    result = suite.run("benchmarks", "-k", "second or A-OK1", "-v")
    result.assert_outcomes(passed=3, deselected=2)
    result.stdout.fnmatch_lines_random(
        [
            "benchmarks/a/A-OK1.yaml::A-OK1::prompt PASSED*",
            "benchmarks/a/A-OK1.yaml::A-OK1::says-hello PASSED*",
            "benchmarks/a/B-TWO.yaml::B-TWO::second PASSED*",
        ]
    )
    assert len(suite.judge_calls()) == 2  # only selected cases are judged


def test_node_id_selects_one_case(suite: Suite) -> None:
    suite.benchmark("B-TWO", two_cases("B-TWO"))
    result = suite.run("benchmarks/a/B-TWO.yaml::B-TWO::second", "-v")
    result.assert_outcomes(passed=1)
    assert suite.judge_calls() == ['{"CANDIDATE_OUTPUT": "hello again"}']


def test_last_failed_reruns_only_the_failed_case(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.benchmark("B-TWO", two_cases("B-TWO", second="FAIL"))
    suite.run("benchmarks", cache=True).assert_outcomes(passed=4, failed=1)
    result = suite.run("benchmarks", "--lf", "-v", cache=True)
    result.assert_outcomes(failed=1, deselected=4)
    result.stdout.fnmatch_lines(["benchmarks/a/B-TWO.yaml::B-TWO::second FAILED*"])


def test_exitfirst_stops_after_the_first_failure(suite: Suite) -> None:
    suite.benchmark("A-ONE", two_cases("A-ONE", second="FAIL"))
    suite.benchmark("B-TWO", two_cases("B-TWO", second="FAIL"))
    result = suite.run("benchmarks", "-x")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])


def test_junit_xml_names_each_case_and_its_line(suite: Suite) -> None:
    suite.benchmark("B-TWO", two_cases("B-TWO", second="FAIL"))
    result = suite.run("benchmarks", "--junitxml=out.xml", "-o", "junit_family=xunit1")
    result.assert_outcomes(passed=2, failed=1)
    cases = {c.get("name"): c for c in ET.parse(suite.root / "out.xml").iter("testcase")}
    assert set(cases) == {"prompt", "first", "second"}
    assert {c.get("classname") for c in cases.values()} == {"benchmarks.a.B-TWO.yaml.B-TWO"}
    assert cases["second"].find("failure") is not None and cases["first"].find("failure") is None
    assert cases["second"].get("file") == "benchmarks/a/B-TWO.yaml"
    assert cases["second"].get("line") == "6"  # 0-based: `- id: second` is on line 7


def test_collect_only_needs_no_judge(bare_suite: Suite) -> None:
    bare_suite.benchmark("B-TWO", two_cases("B-TWO"))
    result = bare_suite.run("benchmarks", "--co", "-q")
    assert len(collected(result)) == 3
    assert result.ret == 0


def test_xdist_runs_benchmarks_in_parallel(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.benchmark("B-TWO", two_cases("B-TWO", second="FAIL"))
    result = suite.run("benchmarks", "-n", "2")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*FAILED benchmarks/a/B-TWO.yaml::B-TWO::second*"])


def test_benchmark_without_cases_skips_plainly_and_needs_no_judge(bare_suite: Suite) -> None:
    bare_suite.benchmark("A-EMPTY", "# no traces yet\ncode: A-EMPTY\nconcept: The output says hello.\n")
    bare_suite.benchmark(
        "NONE",
        "code: NONE\nparent_rubric: null\nthreshold: null\nweight: 0.0\nevaluator_type: manual_sme\n",
        folder="benchmarks/s",
    )
    result = bare_suite.run("benchmarks", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines_random(
        [
            "SKIPPED [[]1] benchmarks/a/A-EMPTY.yaml:2: A-EMPTY has no cases to judge (prompt compiled*",
            "SKIPPED [[]1] benchmarks/s/NONE.yaml:1: NONE has no cases to judge (prompt compiled*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.OK


def test_manual_sme_cases_are_skipped_without_a_judge(bare_suite: Suite) -> None:
    bare_suite.benchmark(
        "S-SME1",
        "code: S-SME1\nevaluator_type: manual_sme\ncases:\n  - {id: c1, candidate_output: x}\n",
    )
    result = bare_suite.run("benchmarks", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*manual_sme: reviewed by a subject-matter expert, not judged automatically"]
    )
    assert result.ret == 0


def test_repo_example_suite_collects_as_written(suite: Suite) -> None:
    for folder in ["benchmarks", "evaluators", "data", "rubrics"]:
        shutil.copytree(REPO / folder, suite.root / folder)
    result = suite.run("benchmarks", "--co", "-q")
    assert collected(result) == [
        "benchmarks/a-component/A-FMT1.yaml::A-FMT1::prompt",
        "benchmarks/a-component/A-FMT1.yaml::A-FMT1::structured",
        "benchmarks/a-component/A-FMT1.yaml::A-FMT1::structured-vitals",
        "benchmarks/a-component/A-MED1.yaml::A-MED1::prompt",
        "benchmarks/a-component/A-MED1.yaml::A-MED1::aspirin-ntg-complete",
        "benchmarks/a-component/A-MED1.yaml::A-MED1::ondansetron-complete",
        "benchmarks/a-component/A-MED1.yaml::A-MED1::aspirin-missing",
        "benchmarks/a-component/A-NEG1.yaml::A-NEG1::prompt",
        "benchmarks/a-component/A-NEG1.yaml::A-NEG1::denies-chest-pain",
        "benchmarks/a-component/A-NEG1.yaml::A-NEG1::no-fever",
        "benchmarks/a-component/A-NEG1.yaml::A-NEG1::chest-pain-flipped",
        "benchmarks/a-component/A-VIT1.yaml::A-VIT1::prompt",
        "benchmarks/a-component/A-VIT1.yaml::A-VIT1::hr-bp-correct",
        "benchmarks/a-component/A-VIT1.yaml::A-VIT1::hr-changed",
        "benchmarks/s-component/NONE.yaml::NONE::prompt",
    ]
    assert "error" not in result.stdout.str().lower()


FORMAT_TOUR = """\
# A-TOUR: every field of BENCHMARK_FORMAT.md, as real files write them.
# Owner: documentation quality.
code: A-TOUR
parent_rubric: A
label: Format tour
concept: >
  The copilot records what the narrative says,
  no more and no less.
weight: 0.25
threshold: null
criticality: threshold_gate
scoring_scale:
  min_value: 0.0
  max_value: 1.0
  normalization_formula: "x"
  descriptions:
    1.0: every case passes
    0.90: release bar
    0.0: no case passes
inclusion_criteria:
  - Apply when the narrative states a finding. Flag if the output changes it.
  - Flag if the output invents a finding.
exclusion_criteria: Do not use for medication reconciliation.
examples:
  - "Narrative: no fever. Output: fever."
  - "POSITIVE example: narrative and output agree."
evaluator_type: hybrid
llm_prompt_file: evaluators/llm-judge/tour_prompt.md
metric: {implementation: judge}
notes: A tour of the format.
checks:
  - type: is_instance
    value: dict
judge:
  temperature: 0
cases_file: data/A-TOUR.jsonl
cases:
  - id: inline-case
    source_narrative: "Pt denies fever."
    ground_truth: {fever: false}
    candidate_output: {fever: false}
    inputs: {scenario: medical}
    label: pass
    metadata: {source: trace-0192}
"""


def test_everything_in_the_format_loads_and_runs(suite: Suite) -> None:
    suite.write(
        "evaluators/llm-judge/tour_prompt.md",
        "SYSTEM: You judge.\r\n\r\nBEHAVIOR: tour\r\n\r\nDESCRIPTION: A tour.\r\n\r\nRUBRIC\r\n"
        "Automatic fail if any of the following are true:\r\n- The output changes a finding.\r\n",
    )
    suite.write("benchmarks/a/A-TOUR.yaml", FORMAT_TOUR)
    suite.write("data/A-TOUR.jsonl", '{"id": "from-jsonl", "candidate_output": {"fever": false}}\n')
    suite.write(
        "benchmarks/a/A-YAML.yaml",
        "code: A-YAML\nconcept: c\nevaluator_type: code\nchecks: [{type: contains, value: hello}]\n"
        "cases_file: data/A-YAML-cases.yaml\n",
    )
    suite.write("data/A-YAML-cases.yaml", "- id: from-yaml\n  candidate_output: hello there\n")
    suite.write(
        "benchmarks/s/NONE.yaml",
        "code: NONE\nparent_rubric: null\nthreshold: null\nweight: 0.0\nevaluator_type: manual_sme\n",
    )
    suite.write(
        "rubrics/A.yaml",
        "code: A\naggregation_method: MINIMUM\npassing_threshold: 0.5\nbenchmarks:\n"
        "  - A-TOUR  # the tour\n  - A-YAML\n",
    )
    result = suite.run("benchmarks", "-v")
    result.stdout.fnmatch_lines_random(
        [
            "benchmarks/a/A-TOUR.yaml::A-TOUR::inline-case PASSED*",
            "benchmarks/a/A-TOUR.yaml::A-TOUR::from-jsonl PASSED*",
            "benchmarks/a/A-YAML.yaml::A-YAML::from-yaml PASSED*",
        ]
    )
    result.assert_outcomes(passed=5, skipped=1)
    assert result.ret == 0


def test_a_check_function_that_raises_errors_its_case_only(suite: Suite) -> None:
    suite.write(
        "checks_mod.py",
        "def strict(ctx):\n    if 'boom' in str(ctx.output):\n        raise ValueError('cannot read it')\n"
        "    return True\n",
    )
    suite.benchmark(
        "A-PY1",
        "code: A-PY1\nconcept: c\nevaluator_type: code\n"
        "checks: [{type: python, function: 'checks_mod:strict'}]\n"
        "cases:\n  - id: fine\n    candidate_output: hello\n  - id: broken\n    candidate_output: boom\n",
    )
    suite.benchmark("A-OK1", GOOD)
    suite.pytester.syspathinsert()
    result = suite.run("benchmarks", "-v")
    result.stdout.fnmatch_lines_random(
        [
            "benchmarks/a/A-PY1.yaml::A-PY1::fine PASSED*",
            "benchmarks/a/A-PY1.yaml::A-PY1::broken ERROR*",
            "benchmarks/a/A-OK1.yaml::A-OK1::says-hello PASSED*",
            "*ValueError: cannot read it*",
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str()
