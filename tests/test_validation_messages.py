"""What a benchmark file with a mistake says, in process (``suite/validation.py``, ``yamlsrc.py``):
the most telling problem at its line and column, the field path as the user wrote it (never
pydantic's names for the members of a union), the count of the other problems, and the hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.files import load_benchmark

HEAD = "code: B\nlabel: b\nthreshold: 1.0\nevaluator_type: llm_judge\nllm_prompt_file: p.md\n"
CASES = "cases:\n  - {id: c, candidate_output: x}\n"
YAML_HINT = "check indentation, colons and quotes on this line and the one above"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            HEAD + "judge: openai:x\n" + CASES,
            "B.yaml:6:1: judge: Input should be a mapping of keys and values (got 'openai:x')\n"
            "  hint: write 'key: value' lines indented under the field, or {key: value}",
        ),
        (
            HEAD + "judge:\n  prompt_style: short-cot\n" + CASES,
            "B.yaml:7:3: judge.prompt_style: 'short-cot' is not one of 'no_reasoning', 'short_cot' or "
            "'long_cot'\n  hint: did you mean 'short_cot'?",
        ),
        (
            HEAD + "judge:\n  repeats: x\n  temperature: y\n  reduce: z\n" + CASES,
            "B.yaml:9:3: judge.reduce: 'z' is not one of 'majority', 'all', 'any' or 'mean' (and 2 more "
            "problems)\n  hint: use one of: majority, all, any, mean",
        ),
        (
            HEAD + "judge:\n  repeats: x\n  reduce: z\n" + CASES,
            "B.yaml:8:3: judge.reduce: 'z' is not one of 'majority', 'all', 'any' or 'mean' (and 1 more "
            "problem)\n  hint: use one of: majority, all, any, mean",
        ),
        (
            HEAD + "judge:\n  modle: openai:x\n" + CASES,
            "B.yaml:7:3: judge.modle: unknown key 'modle'\n  hint: did you mean 'model'?",
        ),
        (
            HEAD + "judge:\n  panel: [openai:a, {modle: x}]\n" + CASES,
            "B.yaml:7:22: judge.panel[1].modle: unknown key 'modle' (and 2 more problems)\n"
            "  hint: did you mean 'model'?",
        ),
        (
            HEAD + "judge:\n  panel: [openai:a, {model: 3}]\n" + CASES,
            "B.yaml:7:22: judge.panel[1].model: Input should be a valid string (got 3) (and 1 more problem)\n"
            "  hint: write text; quote it if YAML reads it as a number, date or yes/no",
        ),
        (
            HEAD + "judge:\n  panel: [openai:a, 3]\n" + CASES,
            "B.yaml:7:21: judge.panel[1]: Input should be a valid string (got 3) (and 1 more problem)\n"
            "  hint: write text; quote it if YAML reads it as a number, date or yes/no",
        ),
        (
            HEAD + "cases:\n  - {id: c, candidate_output: x, weight: [1]}\n",
            "B.yaml:7:34: cases[0].weight: unknown key 'weight'\n  hint: known keys: id, source_narrative, "
            "ground_truth, candidate_output, baseline_output, inputs, label, metadata",
        ),
        (
            HEAD + "judge:\n  panel: [openai:a, {model: openai:b, zzz: 1}]\n" + CASES,
            "B.yaml:7:39: judge.panel[1].zzz: unknown key 'zzz' (and 1 more problem)\n"
            "  hint: known keys: model, base_url",
        ),
        (
            HEAD + "judge: {str: 1}\n" + CASES,
            "B.yaml:6:9: judge.str: unknown key 'str'\n  hint: known keys: model, base_url, temperature, "
            "max_tokens, timeout, prompt_style, repeats, reduce, gate, min_tpr, min_tnr, min_labels, mode, "
            "min_consistency, panel, panel_rule, min_members, batch",
        ),
        (
            HEAD + "task: {prompt_file: p.md, zzz: 1}\n" + CASES,
            "B.yaml:6:27: task.zzz: unknown key 'zzz'\n"
            "  hint: known keys: model, base_url, prompt_file, settings, output_schema, few_shot",
        ),
        (
            HEAD + "judge:\n  repeats: '" + "a" * 70 + "'\n" + CASES,
            "B.yaml:7:3: judge.repeats: Input should be a valid integer, unable to parse string as an "
            f"integer (got '{'a' * 58}…)\n  hint: write a whole number",
        ),
        (
            HEAD + "cases:\n  - {id: c, candidate_output: x, inputs: q}\n",
            "B.yaml:7:34: cases[0].inputs: Input should be a mapping of keys and values (got 'q')\n"
            "  hint: write 'key: value' lines indented under the field, or {key: value}",
        ),
        (
            HEAD + "inclusion_criteria: {a: 1}\n" + CASES,
            "B.yaml:6:1: inclusion_criteria: expected a string or a list of strings (got {'a': 1})\n"
            "  hint: see the 'Benchmark files' section of README.md for what each field takes",
        ),
        (
            HEAD + "cases:\n  - {id: c, candidate_output: x, ground_truth: 2024-01-01}\n",
            "B.yaml:7:34: cases[0].ground_truth: expected a string, a number, true or false, a mapping "
            "or a list (got datetime.date(2024, 1, 1))\n"
            "  hint: see the 'Benchmark files' section of README.md for what each field takes",
        ),
        (
            HEAD + "cases: 3\n",
            "B.yaml:6:1: cases: Input should be a valid list (got 3)\n"
            "  hint: write a list: one '- item' line per entry, or [a, b]",
        ),
        (
            "code: B\n  label: x\n",
            f"B.yaml:2:8: <file>: invalid YAML: mapping values are not allowed here\n  hint: {YAML_HINT}",
        ),
        (
            "code: [1,\n",
            "B.yaml:2:1: <file>: invalid YAML: expected the node content, but found '<stream end>' "
            f"(while parsing a flow node)\n  hint: {YAML_HINT}",
        ),
        (
            "a: b\n\tc: d\n",
            "B.yaml:2:1: <file>: invalid YAML: found character '\\t' that cannot start any token "
            f"(while scanning for the next token)\n  hint: {YAML_HINT}",
        ),
    ],
    ids=[
        "not-a-mapping",
        "enum-typo",
        "three-problems",
        "two-problems",
        "unknown-key",
        "unknown-key-in-a-panel-member",
        "wrong-type-in-a-panel-member",
        "panel-member-neither-string-nor-mapping",
        "unknown-case-key",
        "unknown-key-in-a-panel-member-no-near-key",
        "unknown-key-spelled-like-a-type",
        "unknown-key-in-a-model-task",
        "long-value-cut",
        "not-a-mapping-of-inputs",
        "union-of-two-kinds",
        "union-of-five-kinds-a-date",
        "not-a-list",
        "yaml-mapping-value",
        "yaml-unclosed-flow",
        "yaml-tab",
    ],
)
def test_a_mistake_is_one_error_at_its_line(text: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("SYSTEM: x\n\nRUBRIC\n\nPass conditions:\n- ok\n")
    (tmp_path / "B.yaml").write_text(text)
    with pytest.raises(SpecError) as raised:
        load_benchmark(tmp_path / "B.yaml", "B.yaml", tmp_path)
    assert str(raised.value) == message
