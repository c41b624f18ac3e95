"""The private pydantic-evals names the plugin relies on still exist, with the shape it uses: an
upgrade of pydantic-evals that moves one fails here, by name."""

from __future__ import annotations

import importlib
import inspect

import pytest

from pytest_llmjudge.judging import evals_adapter


@pytest.mark.parametrize("dotted", evals_adapter.PRIVATE_NAMES)
def test_each_private_name_still_exists(dotted: str) -> None:
    module, name = dotted.rsplit(".", 1)
    assert hasattr(importlib.import_module(module), name), (
        f"{dotted} is gone: update judging/evals_adapter.py"
    )


def test_the_prompt_builder_takes_what_the_adapter_passes_and_wraps_each_part() -> None:
    from pydantic_evals.evaluators.llm_as_a_judge import _build_prompt

    assert {"inputs", "output", "expected_output", "rubric"} <= set(
        inspect.signature(_build_prompt).parameters
    )
    prompt = evals_adapter.build_prompt('{"in": 1}', '{"out": 2}', '{"gt": 3}', "RUBRIC TEXT")
    text = prompt if isinstance(prompt, str) else "".join(str(part) for part in prompt)
    for tag, content in (("Input", '{"in": 1}'), ("Output", '{"out": 2}'), ("ExpectedOutput", '{"gt": 3}')):
        assert f"<{tag}>" in text and content in text
    assert "RUBRIC TEXT" in text


def test_the_judge_agent_is_an_agent_and_the_span_tree_error_says_why() -> None:
    from pydantic_ai import Agent

    assert isinstance(evals_adapter.judge_agent(), Agent)
    assert "no spans" in str(evals_adapter.span_tree_unavailable("no spans recorded"))
