"""Malformed benchmark inputs: each is one collection error reading ``path:line:col: field: message``
with a one-line hint, never a traceback, and the other benchmarks still run."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest
from conftest import GOOD, Suite

BAD = "benchmarks/a/A-BAD.yaml"
HEAD = "# A-BAD: a broken benchmark\ncode: A-BAD\nconcept: The output is right.\n"


@dataclass(frozen=True)
class Malformed:
    """Files to write, the expected error line (fnmatch pattern) and its hint."""

    files: dict[str, str | bytes]
    error: str
    hint: str
    also_absent: tuple[str, ...] = field(default=())


def bench(body: str) -> dict[str, str | bytes]:
    return {BAD: HEAD + body}


ALIAS_BOMB = HEAD + "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" if i else "l0: &l0 [x, x, x, x, x, x, x, x, x]\n"
    for i in range(10)
)
MERGE_BOMB = "".join(
    f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 9)}], k{i}: v}}\n" if i else "m0: &m0 {k0: v}\n"
    for i in range(9)
) + HEAD.replace("# A-BAD: a broken benchmark\n", "")

MALFORMED: dict[str, Malformed] = {
    # YAML syntax
    "yaml-unclosed-bracket": Malformed(
        bench("label: [unclosed\n"),
        f"{BAD}:4:8: <file>: invalid YAML: expected ',' or ']', but got '<stream end>'*",
        "check indentation, colons and quotes on this line and the one above",
    ),
    "yaml-unclosed-quote": Malformed(
        bench('label: "never closed\nweight: 0.5\n'),
        f"{BAD}:4:8: <file>: invalid YAML: found unexpected end of stream (while scanning a quoted scalar)",
        "check indentation*",
    ),
    "yaml-bad-indentation": Malformed(
        bench("label: x\n  weight: 0.5\n"),
        f"{BAD}:5:9: <file>: invalid YAML: mapping values are not allowed here",
        "check indentation*",
    ),
    "yaml-tab-indentation": Malformed(
        bench("cases:\n\t- id: a\n"),
        f"{BAD}:5:1: <file>: invalid YAML: found character '\\t' that cannot start any token*",
        "check indentation*",
    ),
    "yaml-two-documents": Malformed(
        bench("---\ncode: A-BAD2\n"),
        f"{BAD}:4:1: <file>: invalid YAML: but found another document*",
        "check indentation*",
    ),
    # wrong types and out-of-range numbers
    "threshold-above-1": Malformed(
        bench("threshold: 1.5\n"),
        f"{BAD}:4:1: threshold: Input should be less than or equal to 1 (got 1.5)",
        "use a number in range",
    ),
    "weight-negative": Malformed(
        bench("weight: -1\n"),
        f"{BAD}:4:1: weight: Input should be greater than or equal to 0 (got -1)",
        "use a number in range",
    ),
    "weight-not-a-number": Malformed(
        bench("weight: heavy\n"),
        f"{BAD}:4:1: weight: Input should be a valid number, unable to parse string as a number"
        " (got 'heavy')",
        "write a plain number such as 0.9",
    ),
    "threshold-yes": Malformed(
        bench("threshold: yes\n"),
        f"{BAD}:4:1: threshold: expected a number from 0 to 1, not a yes/no value (got True)",
        "write a plain number such as 0.9",
    ),
    "code-not-a-string": Malformed(
        {BAD: "code: 12\nconcept: c\n"},
        f"{BAD}:1:1: code: Input should be a valid string (got 12)",
        "write text; quote it if YAML reads it as a number, date or yes/no",
    ),
    "code-with-spaces": Malformed(
        {BAD: "code: A BAD\nconcept: c\n"},
        f"{BAD}:1:1: code: String should match pattern * (got 'A BAD')",
        "use letters, digits, '-', '_' and '.', starting with a letter or digit",
    ),
    "examples-not-a-list": Malformed(
        bench("examples: just one example\n"),
        f"{BAD}:4:1: examples: Input should be a valid list (got 'just one example')",
        "write a list: one '- item' line per entry, or [a, b]",
    ),
    "judge-temperature-out-of-range": Malformed(
        bench("judge:\n  model: openai:gpt-4o\n  temperature: 5\n"),
        f"{BAD}:6:3: judge.temperature: Input should be less than or equal to 2 (got 5)",
        "use a number in range",
    ),
    "scoring-description-key-not-a-number": Malformed(
        bench("scoring_scale:\n  descriptions:\n    1.0: all pass\n    high: most pass\n"),
        f"{BAD}:7:5: scoring_scale.descriptions.high: Input should be a valid number*(got 'high')",
        "write a plain number such as 0.9",
    ),
    # typos in enums and keys
    "criticality-typo": Malformed(
        bench("criticality: hard_gat\n"),
        f"{BAD}:4:1: criticality: 'hard_gat' is not one of 'hard_gate' or 'threshold_gate'",
        "did you mean 'hard_gate'?",
    ),
    "evaluator-type-typo": Malformed(
        bench("evaluator_type: hybird\n"),
        f"{BAD}:4:1: evaluator_type: 'hybird' is not one of 'code', 'llm_judge', 'hybrid' or 'manual_sme'",
        "did you mean 'hybrid'?",
    ),
    "key-typo": Malformed(
        bench("tresholds: 0.9\n"),
        f"{BAD}:4:1: tresholds: unknown key 'tresholds'",
        "did you mean 'threshold'?",
    ),
    "nested-key-typo": Malformed(
        bench("scoring_scale:\n  min_vaule: 0\n"),
        f"{BAD}:5:3: scoring_scale.min_vaule: unknown key 'min_vaule'",
        "did you mean 'min_value'?",
    ),
    "judge-key-typo": Malformed(
        bench("judge:\n  modle: openai:gpt-4o\n"),
        f"{BAD}:5:3: judge.modle: unknown key 'modle'",
        "did you mean 'model'?",
    ),
    "case-key-typo": Malformed(
        bench("cases:\n  - id: a\n    candidate_outptu: hello\n"),
        f"{BAD}:6:5: cases[0].candidate_outptu: unknown key 'candidate_outptu'",
        "did you mean 'candidate_output'?",
    ),
    "case-label-typo": Malformed(
        bench("cases:\n  - id: a\n    candidate_output: hello\n    label: passed\n"),
        f"{BAD}:7:5: cases[0].label: 'passed' is not one of 'pass' or 'fail'",
        "did you mean 'pass'?",
    ),
    "check-type-typo": Malformed(
        bench("evaluator_type: code\nchecks:\n  - type: containz\n    value: x\n"),
        f"{BAD}:6:5: checks[0].type: 'containz' is not one of 'contains', *",
        "did you mean 'contains'?",
    ),
    # missing required fields
    "missing-code": Malformed(
        {BAD: "# no code here\nlabel: Unnamed\nconcept: c\n"},
        f"{BAD}:2:1: code: required field is missing",
        "add 'code:' to this entry",
    ),
    "case-missing-candidate-output": Malformed(
        bench("cases:\n  - id: a\n    source_narrative: Pt denies pain.\n"),
        f"{BAD}:5:5: task: case a has no candidate_output and A-BAD has no task to produce it",
        "add 'task:' (a Python callable or a model with a prompt file), pass --llmjudge-task, "
        "or give each case a candidate_output",
    ),
    "case-missing-id": Malformed(
        bench("cases:\n  - candidate_output: hello\n"),
        f"{BAD}:5:5: cases[0].id: required field is missing",
        "add 'id:' to this entry",
    ),
    "cases-not-a-list": Malformed(
        bench("cases:\n  id: a\n  candidate_output: hello\n"),
        f"{BAD}:4:1: cases: Input should be a valid list*",
        "write a list: one '- item' line per entry, or [a, b]",
    ),
    "llm-judge-without-rubric": Malformed(
        {BAD: "code: A-BAD\nevaluator_type: llm_judge\n"},
        f"{BAD}:2:1: llm_prompt_file: evaluator_type 'llm_judge' needs a rubric",
        "add 'llm_prompt_file:', or build the rubric from 'concept:' and 'inclusion_criteria:'",
    ),
    "code-benchmark-without-checks": Malformed(
        bench("evaluator_type: code\ncases:\n  - id: a\n    candidate_output: hello\n"),
        f"{BAD}:4:1: checks: evaluator_type 'code' has cases but no deterministic checks",
        "add a 'checks:' list*",
    ),
    # case ids
    "case-id-characters": Malformed(
        bench("cases:\n  - id: bad id!\n    candidate_output: hello\n"),
        f"{BAD}:5:5: cases[0].id: String should match pattern * (got 'bad id!')",
        "use letters, digits, '-', '_' and '.', starting with a letter or digit",
    ),
    "case-id-reserved": Malformed(
        bench("cases:\n  - id: prompt\n    candidate_output: hello\n"),
        f"{BAD}:5:5: id: case id 'prompt' is reserved (the benchmark's prompt item)",
        "rename the case",
    ),
    "duplicate-case-ids": Malformed(
        bench("cases:\n  - id: a\n    candidate_output: x\n  - id: a\n    candidate_output: y\n"),
        f"{BAD}:7:5: id: duplicate case id 'a' (first at {BAD}:5:5)",
        "case ids must be unique within a benchmark",
    ),
    "duplicate-case-ids-inline-and-file": Malformed(
        {
            BAD: HEAD + "cases_file: data/A-BAD.jsonl\ncases:\n  - id: a\n    candidate_output: x\n",
            "data/A-BAD.jsonl": '{"id": "b", "candidate_output": "y"}\n'
            '{"id": "a", "candidate_output": "z"}\n',
        },
        f"data/A-BAD.jsonl:2:1: id: duplicate case id 'a' (first at {BAD}:6:5)",
        "case ids must be unique within a benchmark",
    ),
    # duplicates and structure
    "duplicate-key": Malformed(
        bench("label: First\nweight: 0.5\nlabel: Second\n"),
        f"{BAD}:6:1: label: duplicate key 'label' (first defined on line 4)",
        "keep one of the two entries",
    ),
    "empty-file": Malformed(
        {BAD: ""},
        f"{BAD}:1:1: <file>: file is empty",
        "a benchmark file is a YAML mapping with a 'code' key",
    ),
    "comments-only": Malformed(
        {BAD: "# A-BAD: to be written\n# code: A-BAD\n"},
        f"{BAD}:1:1: <file>: file is empty",
        "a benchmark file is a YAML mapping with a 'code' key",
    ),
    "list-file": Malformed(
        {BAD: "[code, A-BAD]\n"},
        f"{BAD}:1:1: <file>: expected a mapping of fields, got a list",
        "a benchmark file starts with 'code: ...'",
    ),
    "scalar-file": Malformed(
        {BAD: "just a sentence about A-BAD\n"},
        f"{BAD}:1:1: <file>: expected a mapping of fields, got a str",
        "a benchmark file starts with 'code: ...'",
    ),
    "not-utf8": Malformed(
        {BAD: b"code: A-BAD\nconcept: c\nlabel: caf\xe9 au lait\n"},
        f"{BAD}:3:11: <file>: file is not valid UTF-8 (byte 0xe9)",
        "save the file as UTF-8",
    ),
    # the safe loader refuses Python tags (and runs nothing)
    "python-object-apply-tag": Malformed(
        bench('label: !!python/object/apply:os.system ["touch pwned"]\n'),
        f"{BAD}:4:8: label: unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'",
        "only plain YAML is loaded (safe loader); remove the tag",
        also_absent=("pwned",),
    ),
    "python-name-tag": Malformed(
        bench("label: !!python/name:os.system\n"),
        f"{BAD}:4:8: label: unsupported YAML tag 'tag:yaml.org,2002:python/name:os.system'",
        "only plain YAML is loaded (safe loader); remove the tag",
    ),
    "custom-tag": Malformed(
        bench("label: !include other.yaml\n"),
        f"{BAD}:4:8: label: unsupported YAML tag '!include'",
        "only plain YAML is loaded (safe loader); remove the tag",
    ),
    "merge-key-not-a-mapping": Malformed(
        bench("judge:\n  <<: 5\n"),
        f"{BAD}:5:7: judge: a merge key '<<' takes a mapping or a list of mappings",
        "merge an anchored mapping: '<<: *name'",
    ),
    # files the benchmark points to
    "missing-prompt-file": Malformed(
        bench("llm_prompt_file: evaluators/llm-judge/missing_prompt.md\n"),
        f"{BAD}:4:1: llm_prompt_file: prompt file 'evaluators/llm-judge/missing_prompt.md' does not exist",
        "paths in benchmark files are relative to the repository root (pytest's rootdir)",
    ),
    "prompt-file-not-utf8": Malformed(
        {
            BAD: HEAD + "llm_prompt_file: evaluators/llm-judge/latin1_prompt.md\n",
            "evaluators/llm-judge/latin1_prompt.md": b"SYSTEM: You judge.\n\nBEHAVIOR: r\xe9sum\xe9\n",
        },
        "evaluators/llm-judge/latin1_prompt.md:3:12: <file>: file is not valid UTF-8 (byte 0xe9)",
        "save the file as UTF-8",
    ),
    "missing-cases-file": Malformed(
        bench("cases_file: data/missing.jsonl\n"),
        f"{BAD}:4:1: cases_file: cases file 'data/missing.jsonl' does not exist",
        "paths in benchmark files are relative to the repository root (pytest's rootdir)",
    ),
    "jsonl-bad-line": Malformed(
        {
            BAD: HEAD + "cases_file: data/A-BAD.jsonl\n",
            "data/A-BAD.jsonl": '{"id": "a", "candidate_output": "x"}\n\n'
            '{"id": "b", "candidate_output": x}\n',
        },
        "data/A-BAD.jsonl:3:33: <file>: invalid JSON: Expecting value",
        "one JSON object per line",
    ),
    "jsonl-invalid-case": Malformed(
        {
            BAD: HEAD + "cases_file: data/A-BAD.jsonl\n",
            "data/A-BAD.jsonl": '{"id": "a", "candidate_output": "x"}\n{"id": "b", "lable": "pass"}\n',
        },
        "data/A-BAD.jsonl:2:1: lable: unknown key 'lable'",
        "did you mean 'label'?",
    ),
    "jsonl-not-utf8": Malformed(
        {
            BAD: HEAD + "cases_file: data/A-BAD.jsonl\n",
            "data/A-BAD.jsonl": b'{"id": "a", "candidate_output": "x"}\n'
            b'{"id": "b", "candidate_output": "\xff"}\n',
        },
        "data/A-BAD.jsonl:2:34: <file>: file is not valid UTF-8 (byte 0xff)",
        "save the file as UTF-8",
    ),
    "yaml-cases-file-invalid-case": Malformed(
        {
            BAD: HEAD + "cases_file: data/A-BAD-cases.yaml\n",
            "data/A-BAD-cases.yaml": "cases:\n  - id: a\n    candidate_output: x\n"
            "  - id: b\n    candidate_output: y\n    label: maybe\n",
        },
        "data/A-BAD-cases.yaml:6:5: cases[1].label: 'maybe' is not one of 'pass' or 'fail'",
        "use one of: pass, fail",
    ),
    "yaml-cases-file-not-a-list": Malformed(
        {BAD: HEAD + "cases_file: data/A-BAD-cases.yaml\n", "data/A-BAD-cases.yaml": "just text\n"},
        "data/A-BAD-cases.yaml:1:1: <file>: expected a list of cases",
        "write one '- id: ...' entry per case",
    ),
}


def assert_one_clean_error(result: pytest.RunResult, error: str, hint: str) -> None:
    """The error line followed by its hint, shown once, as the run's only error, with no traceback."""
    literal = str.maketrans({"[": "[[]"})  # only '*' is a wildcard in these patterns
    result.stdout.fnmatch_lines(
        [error.translate(literal), f"  hint: {hint}".translate(literal)], consecutive=True
    )
    output = result.stdout.str()
    assert output.count("  hint: ") == 1, output
    assert "Traceback" not in output and "pytest_llmjudge/" not in output, output
    assert result.parseoutcomes().get("errors", 0) == 1, output
    assert result.ret != 0


@pytest.mark.parametrize("case", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_input_is_one_clean_collection_error(suite: Suite, case: Malformed) -> None:
    for path, content in case.files.items():
        suite.write(path, content, dedent=False)
    result = suite.run("benchmarks")
    assert_one_clean_error(result, case.error, case.hint)
    for name in case.also_absent:
        assert not (suite.root / name).exists()


def test_there_are_at_least_25_distinct_malformed_inputs() -> None:
    assert len(MALFORMED) >= 25
    assert len({repr(sorted(case.files.items())) for case in MALFORMED.values()}) == len(MALFORMED)


@pytest.mark.parametrize("text", [ALIAS_BOMB, MERGE_BOMB], ids=["aliases", "merge-keys"])
def test_alias_bomb_is_refused_quickly(suite: Suite, text: str) -> None:
    suite.write(BAD, text, dedent=False)
    start = time.perf_counter()
    result = suite.run("benchmarks")
    assert time.perf_counter() - start < 30.0  # refused, not expanded (which takes minutes)
    assert_one_clean_error(
        result,
        f"{BAD}:*: document expands to more than 200000 values (alias bomb?)",
        "remove the nested YAML aliases (*name) that multiply the document",
    )


def test_yaml_merge_keys_load_with_overrides(suite: Suite) -> None:
    suite.benchmark(
        "A-MRG1",
        """\
        code: A-MRG1
        concept: The output says hello.
        cases:
          - &greeting {id: hello-1, source_narrative: Pt says hello., candidate_output: hello}
          - <<: *greeting
            id: hello-2
        """,
    )
    result = suite.run("benchmarks", "-v")
    result.stdout.fnmatch_lines(["*A-MRG1::hello-1 PASSED*", "*A-MRG1::hello-2 PASSED*"])
    assert result.ret == 0


def test_duplicate_benchmark_codes_name_both_files(suite: Suite) -> None:
    suite.benchmark("A-DUP1", "code: A-DUP1\nconcept: First.\n", folder="benchmarks/a")
    suite.benchmark(
        "A-DUP1", "# the same code again\ncode: A-DUP1\nconcept: Second.\n", folder="benchmarks/b"
    )
    result = suite.run("benchmarks")
    assert_one_clean_error(
        result,
        "benchmarks/b/A-DUP1.yaml:2:1: code: duplicate benchmark code 'A-DUP1' (also defined at "
        "benchmarks/a/A-DUP1.yaml:1)",
        "benchmark codes must be unique across the suite",
    )


def test_other_benchmarks_still_run_beside_broken_files(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    for name in ["threshold-above-1", "yaml-unclosed-bracket", "not-utf8"]:
        for path, content in MALFORMED[name].files.items():
            suite.write(path.replace("A-BAD", f"A-BAD-{name}"), content, dedent=False)
    result = suite.run("benchmarks", "-v")
    result.stdout.fnmatch_lines_random(
        [
            "*A-OK1::prompt PASSED*",
            "*A-OK1::says-hello PASSED*",
            "benchmarks/a/A-BAD-threshold-above-1.yaml:4:1: threshold: *",
            "benchmarks/a/A-BAD-yaml-unclosed-bracket.yaml:4:8: <file>: invalid YAML: *",
            "benchmarks/a/A-BAD-not-utf8.yaml:3:11: <file>: file is not valid UTF-8 (byte 0xe9)",
        ]
    )
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 2 and outcomes["errors"] == 3
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "Traceback" not in result.stdout.str()


def test_broken_file_does_not_stop_other_benchmarks_under_xdist(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.write(BAD, HEAD + "threshold: 1.5\n", dedent=False)
    result = suite.run("benchmarks", "-n", "2")
    result.stdout.fnmatch_lines([f"{BAD}:4:1: threshold: *", "  hint: use a number in range"])
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 2 and outcomes["errors"] == 1
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_broken_file_fails_the_run_even_when_every_gate_passes(suite: Suite) -> None:
    # A-TOL1 has a failing case within its threshold: alone, that run exits 0.
    suite.benchmark(
        "A-TOL1",
        """\
        code: A-TOL1
        concept: The output says hello.
        threshold: 0.5
        cases:
          - {id: good, candidate_output: hello}
          - {id: bad, candidate_output: FAIL}
        """,
    )
    assert suite.run("benchmarks").ret == pytest.ExitCode.OK
    suite.write(BAD, HEAD + "threshold: 1.5\n", dedent=False)
    result = suite.run("benchmarks")
    result.stdout.fnmatch_lines([f"{BAD}:4:1: threshold: *"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
