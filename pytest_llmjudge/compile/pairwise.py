"""Benchmark + prompt sections + case + two outputs → the exact pairwise request the judge receives.

A pairwise request asks which of two outputs for one case better satisfies the benchmark's own
rubric (the behavior sections of ``rubric.md.j2``, with a comparison block in place of its
single-output answer block). Both outputs are fenced as data like ``CANDIDATE_OUTPUT``, under
neutral names (``OUTPUT_A``, ``OUTPUT_B``): nothing tells the judge which one is the candidate.
Each pair is asked in both orders; ``order`` says where the candidate stands, and is left out of
the digest, which identifies what the judge is sent: the answer ("A", "B" or "tie") is about
positions, whichever run the outputs came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Literal

from ..suite.files import Benchmark, Case
from ..suite.hashing import canonical_json, digest
from ..suite.prompt_file import PromptSections
from .request import DEFAULT_STYLE, check_style, compile_case, fence, render, rubric_context

Order = Literal["candidate_first", "baseline_first"]
ORDERS: tuple[Order, ...] = ("candidate_first", "baseline_first")
_SHAPE = "pairwise"  # in the digest: a pairwise request never shares an identity with a single one


@dataclass(frozen=True)
class PairwiseRequest:
    """Everything the judge sees when comparing two outputs of one case; ``digest`` identifies it."""

    benchmark: str
    case_id: str
    instructions: str
    system_prompt: str
    rubric: str
    inputs: str
    expected_output: str | None
    output_a: str
    output_b: str
    order: Order
    prompt_style: str

    @property
    def candidate_position(self) -> Literal["A", "B"]:
        """Where the candidate's output stands in this request."""
        return "A" if self.order == "candidate_first" else "B"

    @cached_property
    def digest(self) -> str:
        return digest(
            [
                _SHAPE,
                self.instructions,
                self.system_prompt,
                self.rubric,
                self.inputs,
                self.expected_output,
                self.output_a,
                self.output_b,
                self.prompt_style,
            ]
        )


@lru_cache(maxsize=256)  # every case of a benchmark gets the same rubric: render it once
def compile_pairwise_rubric(sections: PromptSections, code: str, style: str = DEFAULT_STYLE) -> str:
    """The benchmark's rubric (every behavior section) asking which of two outputs satisfies it better."""
    check_style(style)
    return render(
        "pairwise_rubric.md.j2",
        **rubric_context(sections, code),
        output_instruction=render(f"pairwise_output_{style}.j2").strip(),
    )


@lru_cache(maxsize=8)
def pairwise_system_prompt(style: str = DEFAULT_STYLE) -> str:
    """The system prompt of a pairwise judge call: the task, how to answer, and examples."""
    check_style(style)
    return render("pairwise_system.j2", tool_output=style == "no_reasoning").strip()


def identical_outputs(candidate_output: Any, baseline_output: Any) -> bool:
    """The two outputs are the same data (a tie that needs no judge call)."""
    return canonical_json(candidate_output) == canonical_json(baseline_output)


def compile_pairwise(
    benchmark: Benchmark,
    sections: PromptSections,
    case: Case,
    candidate_output: Any,
    baseline_output: Any,
    order: Order,
    style: str = DEFAULT_STYLE,
) -> PairwiseRequest:
    """The exact pairwise judge request for one case, with the candidate placed as ``order`` says.

    Inputs, expected output and instructions are the case's single-output request's, so both
    shapes show the judge the same case data.
    """
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; use one of {', '.join(ORDERS)}")
    single = compile_case(benchmark, sections, case, style)
    first, second = (candidate_output, baseline_output)
    if order == "baseline_first":
        first, second = second, first
    return PairwiseRequest(
        benchmark=single.benchmark,
        case_id=single.case_id,
        instructions=single.instructions,
        system_prompt=pairwise_system_prompt(style),
        rubric=compile_pairwise_rubric(sections, benchmark.code, style),
        inputs=single.inputs,
        expected_output=single.expected_output,
        output_a=fence({"OUTPUT_A": first}),
        output_b=fence({"OUTPUT_B": second}),
        order=order,
        prompt_style=style,
    )


def compile_both_orders(
    benchmark: Benchmark,
    sections: PromptSections,
    case: Case,
    candidate_output: Any,
    baseline_output: Any,
    style: str = DEFAULT_STYLE,
) -> tuple[PairwiseRequest, PairwiseRequest]:
    """The case's two pairwise requests: (candidate first, baseline first)."""
    first, second = (
        compile_pairwise(benchmark, sections, case, candidate_output, baseline_output, order, style)
        for order in ORDERS
    )
    return first, second


def _section(content: str, tag: str) -> list[str]:
    return [f"<{tag}>", content, f"</{tag}>"]


def pairwise_user_prompt(request: PairwiseRequest) -> str:
    """The user prompt, tagged like LLMJudge's: Input → Output A → Output B → ExpectedOutput → Rubric."""
    sections = [
        *_section(request.inputs, "Input"),
        *_section(request.output_a, "OutputA"),
        *_section(request.output_b, "OutputB"),
        *([] if request.expected_output is None else _section(request.expected_output, "ExpectedOutput")),
        *_section(request.rubric, "Rubric"),
    ]
    return "\n".join(sections)


def render_pairwise_messages(
    request: PairwiseRequest, output_tools: Sequence[tuple[str, Mapping[str, Any]]] = ()
) -> str:
    """The messages of a pairwise request as readable text, laid out as single requests are
    (``=== instructions ===``, ``=== system-prompt ===``, ``=== user-prompt ===``), so that
    ``snapshot.split_request`` finds its case data. ``output_tools``: (name, JSON schema) of the
    verdict tool as the judging layer sends it, shown as ``=== output schema (name) ===``.
    """
    lines: list[str] = []
    if request.instructions:
        lines += ["=== instructions ===", request.instructions.strip()]
    lines += ["=== system-prompt ===", request.system_prompt.strip()]
    lines += ["=== user-prompt ===", pairwise_user_prompt(request).strip()]
    for name, schema in output_tools:
        lines += [f"=== output schema ({name}) ===", json.dumps(schema, indent=2, sort_keys=True)]
    return "\n".join(lines) + "\n"
