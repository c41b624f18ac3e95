"""Benchmark + prompt sections + case → the exact request the judge receives.

The rubric (behavior sections, rendered through a jinja2 template with ``StrictUndefined``)
travels as pydantic-evals ``LLMJudge``'s rubric; the case travels as its inputs, expected
output and output. Case values are *fenced*: rendered as JSON whose ``<``, ``>`` and ``&`` are
escaped, so no text inside a candidate output can open a heading line or close a tag.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from typing import Any

import jinja2

from ..suite.files import Benchmark, Case
from ..suite.hashing import digest
from ..suite.prompt_file import Bullet, PromptSections
from ..suite.vocabulary import PROMPT_STYLES

DEFAULT_STYLE = "no_reasoning"
STYLES = PROMPT_STYLES
DEFAULT_UNCERTAINTY = (
    "If the information is ambiguous or incomplete, set pass = false and explain that the case is "
    "uncertain in the reason."
)
_EXCLUSION = re.compile(r"^\s*do not (?:apply|use)(?: this)?(?: when| for| if| to)?\s+", re.I)
_APPLY = re.compile(r"^\s*apply (?:only )?when\s+", re.I)  # a criterion that only sets the scope
_FLAG = re.compile(r"^\s*flag (?:it )?if\s+", re.I)
_CRITERION = re.compile(r"^\s*apply when\s+(?P<when>.+?)\.\s*flag if\s+(?P<flag>.+?)\.?\s*$", re.I | re.S)


@dataclass(frozen=True)
class CompiledRequest:
    """Everything the judge sees for one case; ``digest`` identifies it."""

    benchmark: str
    case_id: str
    instructions: str
    rubric: str
    inputs: str
    expected_output: str | None
    output: str
    prompt_style: str

    @cached_property
    def digest(self) -> str:
        return digest(
            [
                self.instructions,
                self.rubric,
                self.inputs,
                self.expected_output,
                self.output,
                self.prompt_style,
            ]
        )


def without_comments(text: str) -> str:
    """Markdown comments (such as lint ``noqa`` markers) are for authors, not the judge.

    Each ``<!-- … -->`` goes with the whitespace before it; an unclosed ``<!--`` and what follows
    stay. Found with ``str.find``, in linear time (a regex took quadratic time on unclosed ones).
    """
    kept: list[str] = []
    position = 0
    while (start := text.find("<!--", position)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        kept.append(text[position:start].rstrip())
        position = end + 3
    kept.append(text[position:])
    return "".join(kept).strip()


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_llmjudge.compile", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=False,
    )
    environment.filters["nocomment"] = without_comments
    return environment


def render(template: str, **context: Any) -> str:
    """Render a packaged template; a missing variable is an error, never an empty string."""
    return _environment().get_template(template).render(**context).strip() + "\n"


# Escaped inside the JSON strings of case data: markup, and every character that some reader
# takes for a line break (json.dumps already escapes the C0 controls, but with ensure_ascii=False
# leaves NEL, U+2028 and U+2029 raw: a heading after one would start a line of its own).
_FENCE_ESCAPES = {ord(ch): f"\\u{ord(ch):04x}" for ch in "<>&\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


def fence(value: Any) -> str:
    """Case text as inert JSON: line breaks, ``<``, ``>`` and ``&`` cannot escape the data section."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text.translate(_FENCE_ESCAPES)


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(".") + "."
    return text[:1].upper() + text[1:]


def _criteria(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def sections_from_fields(benchmark: Benchmark) -> PromptSections:
    """Canonical sections for a benchmark without a prompt file, built from its own fields."""
    spec = benchmark.spec
    include, fails = [], []
    for criterion in _criteria(spec.inclusion_criteria):
        found = _CRITERION.match(" ".join(criterion.split()))
        if found:
            include.append(Bullet(_sentence(found.group("when")), 0))
            fails.append(Bullet(_sentence(found.group("flag")), 0))
        elif _APPLY.match(criterion):
            include.append(Bullet(_sentence(_APPLY.sub("", criterion)), 0))
        else:
            fails.append(Bullet(_sentence(_FLAG.sub("", criterion)), 0))
    ignore = [Bullet(_sentence(_EXCLUSION.sub("", c)), 0) for c in _criteria(spec.exclusion_criteria)]
    return PromptSections(
        path=str(benchmark.location.path),
        behavior=spec.code,
        description=" ".join((spec.concept or spec.label or spec.code).split()),
        include=tuple(include),
        ignore=tuple(ignore),
        automatic_fail=tuple(fails),
        pass_conditions=(Bullet(_ONLY_CONDITION if fails else _DESCRIBED, 0),),
        uncertainty_policy=DEFAULT_UNCERTAINTY,
        examples=tuple(spec.examples or ()),
    )


_ONLY_CONDITION = "None of the automatic-fail conditions above is true."
_DESCRIBED = "The output shows the behavior in the description above."
_POSITIVE = re.compile(r"^\s*positive(?:\s+example)?\s*[:\-–]\s*", re.IGNORECASE)


def _split_examples(examples: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """``examples`` as (failures, passes): a "POSITIVE example: …" item shows a pass."""
    failures: list[str] = []
    passes: list[str] = []
    for example in examples:
        found = _POSITIVE.match(example)
        (passes if found else failures).append(example[found.end() :] if found else example)
    return failures, passes


def _pass_rule(count: int) -> str:
    if count == 1:
        return "Set pass = true only if condition 1 holds. Otherwise set pass = false."
    return f"Set pass = true only if all conditions 1–{count} hold. Otherwise set pass = false."


def check_style(style: str) -> None:
    """Raise ``ValueError`` for a prompt style that no template answers in."""
    if style not in STYLES:
        raise ValueError(f"unknown prompt style {style!r}; use one of {', '.join(STYLES)}")


def rubric_context(sections: PromptSections, code: str) -> dict[str, Any]:
    """The behavior sections as ``rubric.md.j2`` (and the templates extending it) take them."""
    failures, passes = _split_examples(sections.examples)
    return {
        "behavior": sections.behavior or code,
        "description": sections.description,
        "include": sections.include,
        "ignore": sections.ignore,
        "automatic_fail_header": sections.automatic_fail_header,
        "automatic_fail": sections.automatic_fail,
        "pass_conditions": sections.pass_conditions,
        "acceptable_variations": sections.acceptable_variations,
        "uncertainty_policy": sections.uncertainty_policy or DEFAULT_UNCERTAINTY,
        "examples": failures,
        "pass_examples": passes,
        "notes": dict(sections.notes),
        "pass_rule": _pass_rule(len(sections.pass_conditions)),
    }


@lru_cache(maxsize=256)  # every case of a benchmark gets the same rubric: render it once
def compile_rubric(sections: PromptSections, code: str, style: str = DEFAULT_STYLE) -> str:
    """The LLMJudge rubric: every behavior section, none of SYSTEM or INPUTS."""
    check_style(style)
    return render(
        "rubric.md.j2",
        **rubric_context(sections, code),
        # the style decides how the judge answers: a prompt file's own OUTPUT block is not sent
        output_instruction=render(f"output_{style}.j2").strip(),
    )


# A SYSTEM sentence that sets the answer format ("Respond only with a single JSON object.", "Do
# not include any text before or after the JSON."): the style's OUTPUT section says it instead.
_ANSWER_FORMAT = re.compile(
    r"[^.\n]*\b(?:respond|reply|answer|return)\b[^.\n]*\bjson\b[^.\n]*\.?[ \t]*"
    r"|do not include any text before or after the json\.?[ \t]*",
    re.IGNORECASE,
)


def system_instructions(system: str) -> str:
    """The SYSTEM section as sent: without its answer-format sentences, which would contradict the
    verdict tool (``no_reasoning``) or the reasoning block (the chain-of-thought styles)."""
    lines = [
        _ANSWER_FORMAT.sub("", line).rstrip() if "json" in line.lower() else line
        for line in system.split("\n")
    ]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def compile_case(
    benchmark: Benchmark, sections: PromptSections, case: Case, style: str = DEFAULT_STYLE
) -> CompiledRequest:
    """The exact judge request for one case."""
    spec = case.spec
    inputs: dict[str, Any] = {}
    if spec.source_narrative is not None:
        inputs["SOURCE_NARRATIVE"] = spec.source_narrative
    inputs.update(spec.inputs or {})
    return CompiledRequest(
        benchmark=benchmark.code,
        case_id=case.id,
        instructions=system_instructions(sections.system),
        rubric=compile_rubric(sections, benchmark.code, style),
        inputs=fence(inputs),
        expected_output=None if spec.ground_truth is None else fence({"GROUND_TRUTH": spec.ground_truth}),
        output=fence({"CANDIDATE_OUTPUT": spec.candidate_output}),
        prompt_style=style,
    )
