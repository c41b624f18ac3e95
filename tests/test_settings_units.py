"""The run settings as a user gives them (``suite/settings.py``): where each value comes from,
which values are refused and the exact message, and what a benchmark's own judge settings win
over. In process, so that mutation testing sees these paths; the run-level tests
(``tests/test_guards.py``, ``tests/test_collection.py``) show the same messages through pytest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.suite.files import load_benchmark
from pytest_llmjudge.suite.settings import (
    BATCH_CONCURRENCY,
    DEFAULTS,
    RunSettings,
    judge_setting,
    pairwise_mode,
    panel_for,
    process_wanted,
    prompt_style_for,
    resolve,
)


def settings(cli: dict[str, Any] | None = None, ini: dict[str, Any] | None = None, **env: str) -> RunSettings:
    return resolve((cli or {}).get, (ini or {}).get, env)


def refused(cli: dict[str, Any] | None = None, ini: dict[str, Any] | None = None, **env: str) -> str:
    with pytest.raises(ValueError) as raised:
        settings(cli, ini, **env)
    return str(raised.value)


def test_nothing_given_is_every_default() -> None:
    assert settings() == DEFAULTS == RunSettings()


def test_the_command_line_wins_over_the_environment_and_the_environment_over_the_ini_file() -> None:
    everywhere = settings({"concurrency": "3"}, {"concurrency": "5"}, LLMJUDGE_CONCURRENCY="4")
    assert everywhere.concurrency == 3
    assert settings({}, {"concurrency": "5"}, LLMJUDGE_CONCURRENCY="4").concurrency == 4
    assert settings({}, {"concurrency": "5"}).concurrency == 5
    # an empty value is no value: the next source is read
    assert settings({"concurrency": ""}, {"concurrency": "5"}, LLMJUDGE_CONCURRENCY="").concurrency == 5


def test_values_already_converted_are_taken_as_they_are() -> None:
    assert settings({"concurrency": 7, "overwrite": True}) == RunSettings(concurrency=7, overwrite=True)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            {"temperature": "0.5", "max_tokens": "200", "timeout": "2.5"},
            {"temperature": 0.5, "max_tokens": 200, "timeout": 2.5},
        ),
        (
            {"overwrite": " YES ", "regenerate": "on", "pairwise": "1", "allow_outside_root": "True"},
            {"overwrite": True, "regenerate": True, "pairwise": True, "allow_outside_root": True},
        ),
        (
            {"rejudge_stale": "no", "rejudge_baseline": "off", "overwrite": "0", "pairwise": "false"},
            {"rejudge_stale": False, "rejudge_baseline": False, "overwrite": False, "pairwise": False},
        ),
        ({"batch_wait": "90"}, {"batch_wait": 90.0}),
        ({"batch_wait": "90s"}, {"batch_wait": 90.0}),
        ({"batch_wait": " 30M "}, {"batch_wait": 1800.0}),
        ({"batch_wait": "1.5h"}, {"batch_wait": 5400.0}),
        ({"batch_wait": "2d"}, {"batch_wait": 172_800.0}),
        ({"price": "a=1/2, b=3/4\n c=5/6 ,"}, {"price": ("a=1/2", "b=3/4", "c=5/6")}),
        ({"price": ["a=1/2", "b=3/4"]}, {"price": ("a=1/2", "b=3/4")}),  # a repeated option
        (
            {"panel": "openai:a, openai:b@http://h:1/v1\nopenai:c"},
            {"panel": ("openai:a", "openai:b@http://h:1/v1", "openai:c")},
        ),
        (
            {
                "min_tpr": "0",
                "min_tnr": "1",
                "min_labels": "0",
                "temperature": "0",
                "budget": "0",
                "budget_tokens": "0",
            },
            {
                "min_tpr": 0.0,
                "min_tnr": 1.0,
                "min_labels": 0,
                "temperature": 0.0,
                "budget": 0.0,
                "budget_tokens": 0,
            },
        ),
        (
            {
                "concurrency": "1",
                "attempts": "1",
                "max_tokens": "1",
                "task_concurrency": "1",
                "max_response_bytes": "1",
                "repeats": "1",
            },
            {
                "concurrency": 1,
                "attempts": 1,
                "max_tokens": 1,
                "task_concurrency": 1,
                "max_response_bytes": 1,
                "repeats": 1,
            },
        ),
        (
            {"margin": "0.001", "alpha": "0.999", "timeout": "0.001", "rpm": "0.5", "task_timeout": "1e-3"},
            {"margin": 0.001, "alpha": 0.999, "timeout": 0.001, "rpm": 0.5, "task_timeout": 0.001},
        ),
        (
            {"task": "my_pkg.tasks:answer", "cache": "replay", "task_cache": "off", "judge_process": "off"},
            {"task": "my_pkg.tasks:answer", "cache": "replay", "task_cache": "off", "judge_process": "off"},
        ),
        ({"price": "m=1/2, m=1/2"}, {"price": ("m=1/2", "m=1/2")}),  # the same price twice is one price
    ],
)
def test_values_given_as_text(given: dict[str, Any], expected: dict[str, Any]) -> None:
    read = settings(given)
    assert {name: getattr(read, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("cli", "env", "message"),
    [
        ({"concurrency": "lots"}, {}, "--llmjudge-concurrency: cannot read 'lots' as a whole number"),
        ({"concurrency": "1.5"}, {}, "--llmjudge-concurrency: cannot read '1.5' as a whole number"),
        ({}, {"LLMJUDGE_TIMEOUT": "soon"}, "LLMJUDGE_TIMEOUT (environment): cannot read 'soon' as a number"),
        (
            {},
            {"LLMJUDGE_OVERWRITE": "maybe"},
            "LLMJUDGE_OVERWRITE (environment): cannot read 'maybe' as true or false "
            "(also yes/no, on/off, 1/0)",
        ),
        (
            {"batch_wait": "soon"},
            {},
            "--llmjudge-batch-wait: cannot read 'soon' as a duration "
            "(seconds, or a number with s, m, h or d)",
        ),
        (
            {"batch_wait": "5w"},
            {},
            "--llmjudge-batch-wait: cannot read '5w' as a duration (seconds, or a number with s, m, h or d)",
        ),
        (
            {"budget": ""},
            {},
            "--llmjudge-budget: empty value; give a number of US dollars, or leave the option out",
        ),
        (
            {"budget_tokens": ""},
            {},
            "--llmjudge-budget-tokens: empty value; give a number of tokens, or leave the option out",
        ),
        ({"cache": "always"}, {}, "--llmjudge-cache: 'always' is not one of use, off, refresh, replay"),
        (
            {"prompt_style": "chatty"},
            {},
            "--llmjudge-prompt-style: 'chatty' is not one of no_reasoning, short_cot, long_cot",
        ),
        ({"task_cache": "use"}, {}, "--llmjudge-task-cache: 'use' is not one of on, off, replay"),
        ({"judge_process": "yes"}, {}, "--llmjudge-judge-process: 'yes' is not one of on, off"),
        (
            {"task": "my_pkg.tasks.answer"},
            {},
            "--llmjudge-task: 'my_pkg.tasks.answer' is not an import path 'package.module:function'",
        ),
        ({"concurrency": "0"}, {}, "--llmjudge-concurrency: must be at least 1, not 0"),
        ({"attempts": "0"}, {}, "--llmjudge-attempts: must be at least 1, not 0"),
        ({"max_tokens": "0"}, {}, "--llmjudge-max-tokens: must be at least 1, not 0"),
        ({"task_concurrency": "0"}, {}, "--llmjudge-task-concurrency: must be at least 1, not 0"),
        ({"max_response_bytes": "0"}, {}, "--llmjudge-max-response-bytes: must be at least 1, not 0"),
        ({"repeats": "0"}, {}, "--llmjudge-repeats: must be at least 1, not 0"),
        ({"timeout": "0"}, {}, "--llmjudge-timeout: must be a positive number of seconds, not 0"),
        ({"task_timeout": "-1"}, {}, "--llmjudge-task-timeout: must be a positive number of seconds, not -1"),
        ({"rpm": "0"}, {}, "--llmjudge-rpm: must be a positive number of requests, not 0"),
        ({"timeout": "nan"}, {}, "--llmjudge-timeout: must be a positive number of seconds, not nan"),
        ({"reduce": "median"}, {}, "--llmjudge-reduce: 'median' is not one of majority, all, any, mean"),
        (
            {"gate": "strict"},
            {},
            "--llmjudge-gate: 'strict' is not one of point, lower_bound, corrected, corrected_lower_bound",
        ),
        ({"fail_on": "drop"}, {}, "--llmjudge-fail-on: 'drop' is not one of regression, worse"),
        ({"margin": "0"}, {}, "--llmjudge-margin: must lie strictly between 0 and 1, not 0"),
        ({"margin": "1"}, {}, "--llmjudge-margin: must lie strictly between 0 and 1, not 1"),
        ({"alpha": "0"}, {}, "--llmjudge-alpha: must lie strictly between 0 and 1, not 0"),
        ({"alpha": "1"}, {}, "--llmjudge-alpha: must lie strictly between 0 and 1, not 1"),
        ({"min_tpr": "-0.1"}, {}, "--llmjudge-min-tpr: must be a rate from 0 to 1, not -0.1"),
        ({"min_tnr": "1.1"}, {}, "--llmjudge-min-tnr: must be a rate from 0 to 1, not 1.1"),
        ({"min_labels": "-1"}, {}, "--llmjudge-min-labels: must be 0 or more, not -1"),
        ({"temperature": "-0.5"}, {}, "--llmjudge-temperature: must be 0 or more, not -0.5"),
        ({"temperature": "nan"}, {}, "--llmjudge-temperature: must be 0 or more, not nan"),
        ({"budget": "-1"}, {}, "--llmjudge-budget: must be a finite number of US dollars, 0 or more, not -1"),
        (
            {"budget": "inf"},
            {},
            "--llmjudge-budget: must be a finite number of US dollars, 0 or more, not inf",
        ),
        ({"budget_tokens": "-1"}, {}, "--llmjudge-budget-tokens: must be 0 or more tokens, not -1"),
        (
            {"price": "m=1/2, m=1/3"},
            {},
            "--llmjudge-price: m is priced twice (1/2 and 1/3); give one price per model",
        ),
        ({"panel_rule": "most"}, {}, "--llmjudge-panel-rule: 'most' is not one of majority, unanimous, any"),
        (
            {"batch": "later"},
            {},
            "--llmjudge-batch: 'later' is not one of off, on, submit, collect (a path right "
            "after a bare --llmjudge-batch is read as its value: write --llmjudge-batch=on)",
        ),
        (
            {"batch_wait": "0"},
            {},
            "--llmjudge-batch-wait: must be a positive duration (seconds, or with s, m, h or d), not 0",
        ),
        (
            {"batch_wait": "inf"},
            {},
            "--llmjudge-batch-wait: must be a positive duration (seconds, or with s, m, h or d), not inf",
        ),
    ],
)
def test_refused_values_name_their_source(cli: dict[str, Any], env: dict[str, str], message: str) -> None:
    assert refused(cli, None, **env) == message


def test_edge_values_that_are_read_as_given() -> None:
    assert settings({"batch_wait": "0.5"}).batch_wait == 0.5  # any positive duration
    # a model name holding "=" is priced by its last one, as the price reader splits it
    assert refused({"price": "a=b=1/2, a=b=1/3"}) == (
        "--llmjudge-price: a=b is priced twice (1/2 and 1/3); give one price per model"
    )
    assert refused({"panel": "openai:a@, openai:b"}) == (
        "--llmjudge-panel: 'openai:a@' is not a panel member 'MODEL' or 'MODEL@BASE_URL'"
    )


def test_an_empty_limit_is_refused_only_on_the_command_line() -> None:
    # an unset CI variable in ``--llmjudge-budget=$BUDGET`` would lift the limit; elsewhere empty is unset
    assert settings({}, {"budget": ""}, LLMJUDGE_BUDGET="").budget is None
    assert settings({"budget": None}, {"budget": "2"}).budget == 2.0


def test_a_refused_value_in_the_ini_file_is_named_as_such() -> None:
    assert refused({}, {"repeats": "0"}) == "llmjudge_repeats (ini file): must be at least 1, not 0"
    assert refused({}, {"panel": ["openai:a", "openai:a"]}).startswith("llmjudge_panel (ini file): ")


def test_a_replay_run_replays_its_task_outputs_too_unless_told_otherwise() -> None:
    assert settings({"cache": "replay"}).task_cache == "replay"
    assert settings({"cache": "replay", "task_cache": "on"}).task_cache == "on"
    assert settings({"cache": "off"}).task_cache == "on"


def test_a_batched_run_has_every_call_in_flight_unless_a_concurrency_is_given() -> None:
    assert settings({"batch": "on"}).concurrency == BATCH_CONCURRENCY == 50_000
    assert settings({"batch": "submit"}, LLMJUDGE_CONCURRENCY="9").concurrency == 9
    assert settings({"batch": "off"}).concurrency == DEFAULTS.concurrency == 16


@pytest.mark.parametrize(
    ("changes", "wanted"),
    [
        ({}, True),
        ({"judge_process": "off"}, False),
        ({"base_url": None}, False),
        ({"model": None}, False),
        ({"model": "local:http://127.0.0.1:8080"}, False),
        ({"model": "localhost:m"}, True),  # only the ``local`` provider serves itself
        ({"cache": "replay"}, False),
        ({"cache": "refresh"}, True),
        ({"batch": "on"}, False),
        ({"batch": "collect"}, False),
    ],
)
def test_the_judge_process_is_started_for_a_model_at_a_base_url(
    changes: dict[str, Any], wanted: bool
) -> None:
    base = RunSettings(model="openai:judge", base_url="http://127.0.0.1:8000/v1")
    assert process_wanted(RunSettings(**{**base.__dict__, **changes})) is wanted


def _benchmark(tmp_path: Path, judge: str = "", evaluator: str = "llm_judge") -> Any:
    (tmp_path / "rubric_prompt.md").write_text(
        "SYSTEM: x\n\nRUBRIC\n\nPass if all of the following are true:\n- ok\n"
    )
    path = tmp_path / "B.yaml"
    path.write_text(
        f"code: B\nlabel: b\nthreshold: 1.0\nevaluator_type: {evaluator}\nllm_prompt_file: rubric_prompt.md\n"
        + (f"judge:\n{judge}" if judge else "")
        + "cases:\n  - id: c1\n    candidate_output: x\n    baseline_output: y\n"
    )
    return load_benchmark(path, "B.yaml", tmp_path)


def test_a_benchmarks_own_judge_settings_win_over_the_runs(tmp_path: Path) -> None:
    run = RunSettings(prompt_style="short_cot", repeats=3, reduce="all")
    plain = _benchmark(tmp_path)
    assert prompt_style_for(plain, run) == "short_cot"
    assert judge_setting(plain, run, "repeats") == 3
    own = _benchmark(tmp_path, "  prompt_style: long_cot\n  repeats: 5\n")
    assert prompt_style_for(own, run) == "long_cot"
    assert judge_setting(own, run, "repeats") == 5
    assert judge_setting(own, run, "reduce") == "all"  # not set by the benchmark: the run's


def test_pairwise_is_the_benchmarks_mode_else_the_runs_for_judged_benchmarks(tmp_path: Path) -> None:
    on = RunSettings(pairwise=True)
    assert pairwise_mode(_benchmark(tmp_path), on) is True
    assert pairwise_mode(_benchmark(tmp_path), RunSettings()) is False
    assert pairwise_mode(_benchmark(tmp_path, "  mode: single\n"), on) is False
    assert pairwise_mode(_benchmark(tmp_path, "  mode: pairwise\n"), RunSettings()) is True


def test_the_panel_of_a_benchmark_its_own_else_the_runs(tmp_path: Path) -> None:
    run = RunSettings(panel=("openai:a", "openai:b", "openai:c"), panel_rule="unanimous")
    assert panel_for(_benchmark(tmp_path), RunSettings()) is None
    from_run = panel_for(_benchmark(tmp_path), run)
    assert from_run is not None
    assert [m.model for m in from_run.members] == ["openai:a", "openai:b", "openai:c"]
    assert (from_run.rule, from_run.min_members) == ("unanimous", 2)
    # its own single judge: no panel, even when the run has one
    assert panel_for(_benchmark(tmp_path, "  model: openai:x\n"), run) is None
    own = panel_for(
        _benchmark(tmp_path, "  panel: [openai:x, openai:y]\n  panel_rule: any\n  min_members: 1\n"), run
    )
    assert own is not None
    assert ([m.model for m in own.members], own.rule, own.min_members) == (["openai:x", "openai:y"], "any", 1)
    with pytest.raises(ValueError, match=r"^B: judge.min_members is 4 but the panel has 3 judges$"):
        panel_for(_benchmark(tmp_path, "  min_members: 4\n"), run)
    three = panel_for(_benchmark(tmp_path, "  min_members: 3\n"), run)
    assert three is not None and three.min_members == 3
