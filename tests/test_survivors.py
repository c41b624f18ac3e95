"""Runs that break when the task step, the budget, pairwise judging or the estimate misbehave in
ways the other tests let through: each test is a whole pytest run on a small suite, asserting
the model calls made, the results file and the exit status a user sees."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import GOOD, Suite
from task_suites import (
    cases_of,
    model_task_benchmark,
    results,
    serve_model_tasks,
    task_calls,
    write_model_suite,
    write_task_suite,
)

# -- the task step ------------------------------------------------------------------------------


def test_with_three_repeats_a_task_runs_once_per_case_and_each_sample_is_judged(suite: Suite) -> None:
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text().replace("threshold: 0.5\n", "threshold: 0.5\njudge: {repeats: 3}\n"))
    result = suite.run("benchmarks", "--llmjudge-results=r.json")
    result.assert_outcomes(passed=4)
    assert sorted(task_calls(suite)) == ["c0", "c1", "c2"]  # once per case, not once per repeat
    assert len(suite.judge_calls()) == 9  # three samples of each produced output
    cases = cases_of(results(suite), "T1")
    assert {case: len(c["samples"]) for case, c in cases.items()} == {"c0": 3, "c1": 3, "c2": 3}
    assert result.ret == 0


HYBRID_TASK = """\
code: H1
concept: The output greets.
inclusion_criteria: Apply when there is output. Flag if it does not greet.
threshold: 0.5
evaluator_type: hybrid
checks:
  - {type: contains, value: hello}
task: app.produce:run
cases:
  - {id: greets, source_narrative: hello there}
  - {id: leaves, source_narrative: goodbye}
"""


# The system under test answers with its narrative, logging each call.
ECHO_TASK = """\
from pathlib import Path

CALLS = Path(__file__).parent.parent / "task_calls.log"


def run(case):
    with CALLS.open("a") as log:
        log.write(case.id + "\\n")
    return case.source_narrative
"""


def test_a_hybrid_case_whose_produced_output_fails_its_checks_is_not_judged(suite: Suite) -> None:
    suite.write("app/__init__.py", "")
    suite.write("app/produce.py", ECHO_TASK)
    suite.benchmark("H1", HYBRID_TASK)
    result = suite.run("benchmarks", "--llmjudge-results=r.json")
    result.assert_outcomes(passed=2, failed=1)  # the prompt item, greets; leaves fails its check
    assert sorted(task_calls(suite)) == ["greets", "leaves"]
    assert len(suite.judge_calls()) == 1 and "hello there" in suite.judge_calls()[0]
    cases = cases_of(results(suite), "H1")
    assert cases["leaves"]["result"] == "fail" and cases["greets"]["result"] == "pass"
    assert result.ret == 0  # one case of two passing meets the threshold of 0.5


# -- a model task against the loopback OpenAI-compatible server ----------------------------------


def test_a_changed_task_temperature_produces_the_outputs_again(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_openai import serve

    with serve(verdict={"answer": "heparin"}) as fake:
        write_model_suite(suite, fake.url, monkeypatch)
        suite.run("benchmarks", "-k", "asked").assert_outcomes(passed=1)
        suite.run("benchmarks", "-k", "asked").assert_outcomes(passed=1)
        assert len(fake.completions) == 1  # unchanged: the output is cached
        path = suite.root / "benchmarks/a/M1.yaml"
        path.write_text(path.read_text().replace("{temperature: 0}", "{temperature: 1}"))
        result = suite.run("benchmarks", "-k", "asked", "--llmjudge-results=r.json")
        result.assert_outcomes(passed=1)
        assert [c.body["temperature"] for c in fake.completions] == [0, 1]
        assert cases_of(results(suite), "M1")["asked"]["produced"]["source"] == "task"


EXAMPLES = """\
{"id": "ex-insulin", "source_narrative": "Pt given insulin", "ground_truth": {"answer": "insulin"}}
"""


def test_few_shot_examples_come_from_the_examples_file(suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    from fake_openai import serve

    with serve(verdict={"answer": "heparin"}) as fake:
        write_model_suite(suite, fake.url, monkeypatch)
        suite.write("examples/shots.jsonl", EXAMPLES)
        path = suite.root / "benchmarks/a/M1.yaml"
        text = path.read_text().replace(
            "{n_shots: 1, seed: 7}", "{n_shots: 1, seed: 7, examples_file: examples/shots.jsonl}"
        )
        path.write_text(text.replace(", ground_truth: {answer: aspirin}", ""))  # no example in the file
        result = suite.run("benchmarks", "--llmjudge-results=r.json")
        result.assert_outcomes(passed=3)
        assert len(fake.completions) == 2
        for completion in fake.completions:
            texts = [(m["role"], m["content"]) for m in completion.body["messages"]]
            assert texts[1:3] == [
                ("user", "Narrative: Pt given insulin"),
                ("assistant", '{"answer":"insulin"}'),
            ]
        produced = cases_of(results(suite), "M1")
        assert {case: p["produced"]["source"] for case, p in produced.items()} == {
            "shown": "task",
            "asked": "task",
        }


@pytest.mark.parametrize(("limit", "task_calls_made"), [(20, 1), (19, 0)])
def test_a_task_call_projected_exactly_at_the_token_budget_is_made_one_over_is_not(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, limit: int, task_calls_made: int
) -> None:
    """The call is projected at 20 tokens: its request "[user]\\n" + 33 characters is 10 tokens at
    4 characters a token, 12 at the high end of the ±20 % range, plus max_tokens 8 for its answer."""
    from fake_openai import serve

    narrative = "a narrative of thirty-three chars"
    assert len(narrative) == 33
    with serve(verdict="x") as fake:
        serve_model_tasks(suite, monkeypatch)
        suite.write("prompts/say.yaml", "messages:\n  - role: user\n    content: '{{ source_narrative }}'\n")
        case = f'  - {{id: only, source_narrative: "{narrative}"}}\n'
        one_call = model_task_benchmark(
            "M1", fake.url, "prompts/say.yaml", case, "  settings: {max_tokens: 8}\n"
        )
        suite.benchmark("M1", one_call)
        result = suite.run("benchmarks", f"--llmjudge-budget-tokens={limit}", "-rE")
        sent = [[m["content"] for m in c.body["messages"]] for c in fake.completions]
        assert sent == [[narrative]] * task_calls_made
        spent = 5 * task_calls_made  # the fake server reports 3 input and 2 output tokens a call
        result.stdout.fnmatch_lines([f"*budget reached: spent {spent} of {limit} tokens*"])
        assert result.ret == 1


# -- pairwise -----------------------------------------------------------------------------------

PAIRWISE_STYLE_CONFTEST = """
import json
import re
from pathlib import Path

import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, SystemPromptPart, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
CALLS = Path(__file__).parent / "judge_calls.log"


def judge(messages, info):
    parts = [p for m in messages for p in m.parts]
    system = "".join(p.content for p in parts if isinstance(p, SystemPromptPart))
    prompt = "".join(p.content for p in parts if isinstance(getattr(p, "content", None), str))
    if "<OutputA>" not in prompt:  # the baseline run, judged case by case
        args = {"pass": True, "reason": "single"}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
    a = re.search(r"<OutputA>\\n(.*?)\\n</OutputA>", prompt, re.S).group(1)
    b = re.search(r"<OutputB>\\n(.*?)\\n</OutputB>", prompt, re.S).group(1)
    winner = "tie" if ("BETTER" in a) == ("BETTER" in b) else "A" if "BETTER" in a else "B"
    record = {"a": a, "b": b, "tools": bool(info.output_tools), "tool_prompt": "verdict tool" in system}
    with CALLS.open("a") as log:
        log.write(json.dumps(record) + "\\n")
    args = {"winner": winner, "reason": "compared"}
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
    return ModelResponse(parts=[TextPart("<reasoning>compared</reasoning>\\n" + json.dumps(args))])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="pair-judge")
"""


def pair_head(code: str, extra: str = "") -> str:
    return (
        f"code: {code}\nlabel: {code} compared\nconcept: The output is good.\nweight: 1\nthreshold: 0.9\n"
        f"inclusion_criteria: Apply always. Flag a bad output.\n{extra}cases:\n"
    )


@pytest.fixture
def pairs(pytester: pytest.Pytester) -> Suite:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(PAIRWISE_STYLE_CONFTEST)
    return Suite(pytester)


def logged(suite: Suite) -> list[dict[str, Any]]:
    return [json.loads(line) for line in suite.judge_calls()]


def test_text_styles_answer_in_text_and_no_reasoning_through_the_verdict_tool(pairs: Suite) -> None:
    for code, style in (("P-TEXT", "short_cot"), ("P-TOOL", "no_reasoning")):
        pairs.benchmark(
            code,
            pair_head(code, f"judge: {{prompt_style: {style}}}\n")
            + f"  - {{id: c, candidate_output: BETTER {style}, baseline_output: plain}}\n",
        )
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-results=r.json")
    calls = logged(pairs)
    by_style = {
        style: [c for c in calls if style in c["a"] + c["b"]] for style in ("short_cot", "no_reasoning")
    }
    assert [(c["tools"], c["tool_prompt"]) for c in by_style["short_cot"]] == [(False, False)] * 2
    assert [(c["tools"], c["tool_prompt"]) for c in by_style["no_reasoning"]] == [(True, True)] * 2
    outcomes = {
        code: cases_of(results(pairs), code)["c"]["pairwise"]["outcome"] for code in ("P-TEXT", "P-TOOL")
    }
    assert outcomes == {"P-TEXT": "win", "P-TOOL": "win"}
    assert result.ret == 0


def test_a_task_then_pairwise_judges_each_order_once_per_repeat(pairs: Suite) -> None:
    pairs.write("app/__init__.py", "")
    pairs.write("app/produce.py", "def run(case):\n    return case.source_narrative.upper()\n")
    pairs.benchmark(
        "P-TASK",
        pair_head("P-TASK", "task: app.produce:run\njudge: {repeats: 3}\n")
        + "  - {id: win, source_narrative: better words, baseline_output: plain words}\n",
    )
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-results=r.json")
    assert len(pairs.judge_calls()) == 6  # two orders, three samples each
    answers = cases_of(results(pairs), "P-TASK")["win"]["pairwise"]["answers"]
    assert [a["calls"] for a in answers] == [3, 3]
    assert [a["sample_winners"] for a in answers] == [["A", "A", "A"], ["B", "B", "B"]]
    assert result.ret == 0


def test_a_cases_own_baseline_output_wins_over_the_baseline_run(pairs: Suite) -> None:
    pairs.benchmark("P-OWN", pair_head("P-OWN") + "  - {id: c0, candidate_output: plain 0}\n")
    pairs.run("--llmjudge-results=base.json")  # the baseline run: c0's output is "plain 0"
    pairs.benchmark(
        "P-OWN",
        pair_head("P-OWN") + "  - {id: c0, candidate_output: BETTER 0, baseline_output: BETTER own}\n",
    )
    result = pairs.run("--llmjudge-pairwise", "--llmjudge-baseline=base.json", "--llmjudge-results=r.json")
    pair = cases_of(results(pairs), "P-OWN")["c0"]["pairwise"]
    assert (pair["baseline_source"], pair["baseline_output"], pair["outcome"]) == (
        "case file",
        "BETTER own",
        "tie",
    )
    shown = [c["a"] + c["b"] for c in logged(pairs)]
    assert len(shown) == 2 and all("BETTER own" in both and "plain 0" not in both for both in shown)
    assert result.ret == 0


# -- the estimate ---------------------------------------------------------------------------------


def test_an_estimate_under_xdist_runs_in_one_process_and_prints_once(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    result = suite.run("benchmarks", "-n", "2", "--llmjudge-estimate")
    output = result.stdout.str()
    assert output.count("llmjudge estimate") == 1, output
    assert "created: 2/2 workers" not in output and "[gw" not in output
    assert suite.judge_calls() == []
    assert result.ret == 0
