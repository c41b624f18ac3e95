"""A benchmark's rubric sections: from its prompt file, else from its own fields."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..suite.errors import display_path
from ..suite.files import Benchmark, read_text
from ..suite.prompt_file import PromptSections, parse_prompt
from ..suite.prompt_syntax import check_prompt
from .request import sections_from_fields


def sections_for(benchmark: Benchmark, display_root: Path) -> PromptSections:
    """Parse the benchmark's ``llm_prompt_file`` (SpecError at its line when a required section is
    missing or a line would not reach the judge; a prompt without DESCRIPTION takes the
    benchmark's ``concept``), or build the sections from its concept, criteria and examples when
    it has none."""
    if benchmark.prompt_path is None:
        return sections_from_fields(benchmark)
    display = display_path(benchmark.prompt_path, display_root)
    sections = parse_prompt(read_text(benchmark.prompt_path, display), display)
    if not sections.description and benchmark.spec.concept:  # the benchmark's concept describes it
        sections = replace(sections, description=" ".join(benchmark.spec.concept.split()))
    check_prompt(sections)
    if benchmark.spec.examples and not sections.examples:  # the benchmark's examples still count
        sections = replace(sections, examples=tuple(benchmark.spec.examples))
    return sections
