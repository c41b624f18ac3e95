"""Each request the judge is sent says one thing about how to answer, whatever the prompt style."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_llmjudge.compile.request import STYLES, compile_case
from pytest_llmjudge.judging.rendering import render_messages
from pytest_llmjudge.suite.files import load_benchmark
from pytest_llmjudge.suite.prompt_file import parse_prompt

ROOT = Path(__file__).resolve().parent.parent

# (style, text that must not be in its request): each contradicts how that style answers.
CONTRADICTIONS = [
    ("short_cot", "Do not include your reasoning process"),
    ("long_cot", "Do not include your reasoning process"),
    ("short_cot", "Respond only with a single JSON object"),
    ("long_cot", "Respond only with a single JSON object"),
    ("no_reasoning", "Respond only with a single JSON object"),  # the verdict goes through the tool
    ("no_reasoning", "compact JSON"),
    ("no_reasoning", "You respond with a JSON object"),
]


def rendered(path: str, style: str) -> str:
    benchmark = load_benchmark(ROOT / path, path, ROOT)
    assert benchmark.spec.llm_prompt_file
    prompt = benchmark.spec.llm_prompt_file
    sections = parse_prompt((ROOT / prompt).read_text(encoding="utf-8"), prompt)
    return render_messages(compile_case(benchmark, sections, benchmark.cases[0], style))


@pytest.mark.parametrize("path", ["benchmarks/a-component/A-MED1.yaml", "benchmarks/a-component/A-NEG1.yaml"])
@pytest.mark.parametrize(("style", "contradiction"), CONTRADICTIONS)
def test_no_request_contradicts_its_style(path: str, style: str, contradiction: str) -> None:
    text = rendered(path, style)
    assert re.search(re.escape(contradiction), text, re.IGNORECASE) is None, text


@pytest.mark.parametrize("style", STYLES)
def test_each_style_says_how_to_answer(style: str) -> None:
    text = rendered("benchmarks/a-component/A-MED1.yaml", style)
    if style == "no_reasoning":
        assert "verdict tool" in text and "=== output schema" in text
    else:
        assert "<reasoning>" in text and "=== output schema" not in text
