"""Run settings from command line, environment and ini file, in that order of precedence."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .panel_spec import Panel, default_min_members, panel_problem, parse_members, spec_members
from .vocabulary import CACHE_MODES, GATE_RULES, IMPORT_PATH, PANEL_RULES, PROMPT_STYLES, REDUCERS

if TYPE_CHECKING:
    from .files import Benchmark


@dataclass(frozen=True)
class RunSettings:
    model: str | None = None
    base_url: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout: float = 60.0
    prompt_style: str = "no_reasoning"
    concurrency: int = 16
    rpm: float | None = None
    attempts: int = 4
    cache: str = "use"
    cache_path: str = ".llmjudge/cache.sqlite"
    review_file: str = ".llmjudge/review.json"
    repeats: int = 1
    reduce: str = "majority"
    gate: str = "point"
    results: str | None = None
    html: str | None = None
    baseline: str | None = None
    margin: float = 0.05
    alpha: float = 0.05
    fail_on: str | None = None
    min_tpr: float | None = None
    min_tnr: float | None = None
    min_labels: int | None = None
    allow_outside_root: bool = False
    max_response_bytes: int = 1_000_000  # a judge's HTTP response, decoded; more ends the case as an ERROR
    task: str | None = None  # a Python task for benchmarks without their own ``task:``
    task_model: str | None = None  # replaces the model of every model task
    task_base_url: str | None = None
    task_concurrency: int = 8
    task_timeout: float = 300.0
    task_cache: str = "on"
    regenerate: bool = False  # run the task also for cases that have a candidate_output
    overwrite: bool = False
    pairwise: bool = False  # judge every llm_judge benchmark's cases against a baseline output
    # cost: prices of models genai-prices does not list, and the run's budget
    price: tuple[str, ...] = ()  # MODEL=IN/OUT, USD per million input/output tokens
    budget: float | None = None  # USD: no call starts past it
    budget_tokens: int | None = None  # input plus output tokens: no call starts past it
    # a panel of judges for benchmarks without their own judge: MODEL or MODEL@BASE_URL each
    panel: tuple[str, ...] = ()
    panel_rule: str = "majority"  # majority (a tie is uncertain), unanimous or any
    # judge calls through the provider's batch API: off, on, submit (and end) or collect
    batch: str = "off"
    batch_wait: float = 86_400.0  # seconds an ``on`` or ``collect`` run waits for its batches
    # one judge per gate: cached verdicts of another resolved snapshot are judged again
    rejudge_stale: bool = False
    rejudge_baseline: bool = False  # the baseline's stored outputs judged again by this run's judge
    # judges served at a base URL are called from a process of their own (models/judge_process.py)
    judge_process: str = "on"


_DURATION_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _prices(text: str) -> tuple[str, ...]:
    """``--llmjudge-price`` values: one per option, ini line, or comma-separated item. Each is
    read (``MODEL=IN/OUT``) by ``cost.pricing.parse_price_option`` when the run starts."""
    return tuple(item.strip() for line in text.splitlines() for item in line.split(",") if item.strip())


def _duration(text: str) -> float:
    """Seconds of ``90``, ``90s``, ``30m``, ``24h`` or ``1d``."""
    value = text.strip().lower()
    unit = _DURATION_UNITS.get(value[-1:], 0.0)
    number = float(value[:-1] if unit else value)
    return number * (unit or 1.0)


def _boolean(text: str) -> bool:
    """``true``/``false`` as pytest reads ini booleans (also yes/no, on/off, 1/0)."""
    value = text.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(text)


# How a setting given as text is read; each also comes from LLMJUDGE_<NAME> and llmjudge_<name>.
_CONVERTERS: dict[str, Callable[[str], Any]] = {
    "model": str,
    "base_url": str,
    "temperature": float,
    "max_tokens": int,
    "timeout": float,
    "prompt_style": str,
    "concurrency": int,
    "rpm": float,
    "attempts": int,
    "cache": str,
    "cache_path": str,
    "review_file": str,
    "repeats": int,
    "reduce": str,
    "gate": str,
    "results": str,
    "html": str,
    "baseline": str,
    "margin": float,
    "alpha": float,
    "fail_on": str,
    "min_tpr": float,
    "min_tnr": float,
    "min_labels": int,
    "allow_outside_root": _boolean,
    "max_response_bytes": int,
    "task": str,
    "task_model": str,
    "task_base_url": str,
    "task_concurrency": int,
    "task_timeout": float,
    "task_cache": str,
    "regenerate": _boolean,
    "overwrite": _boolean,
    "pairwise": _boolean,
    "price": _prices,
    "budget": float,
    "budget_tokens": int,
    "panel": _prices,  # the same list form: one a line, or comma-separated
    "panel_rule": str,
    "batch": str,
    "batch_wait": _duration,
    "rejudge_stale": _boolean,
    "rejudge_baseline": _boolean,
    "judge_process": str,
}
# What a value that does not convert should have been, as the error says it.
_KINDS: dict[Callable[[str], Any], str] = {
    int: "a whole number",
    float: "a number",
    _boolean: "true or false (also yes/no, on/off, 1/0)",
    _duration: "a duration (seconds, or a number with s, m, h or d)",
}
# Limits an empty option value would silently lift (``--llmjudge-budget=`` from an unset CI
# variable): what to give instead.
_NEVER_EMPTY = {"budget": "a number of US dollars", "budget_tokens": "a number of tokens"}
FAIL_ON = ("regression", "worse")
TASK_CACHE_MODES = ("on", "off", "replay")
JUDGE_PROCESS_MODES = ("on", "off")
BATCH_MODES = ("off", "on", "submit", "collect")
BATCH_CONCURRENCY = 50_000  # a batched run's calls in flight: every one (OpenAI's batch holds 50,000)
DEFAULTS = RunSettings()


def env_variable(name: str) -> str:
    return f"LLMJUDGE_{name.upper()}"


def resolve(
    cli: Callable[[str], Any], ini: Callable[[str], Any], env: dict[str, str] | None = None
) -> RunSettings:
    """Each setting from ``cli(name)``, else the environment, else ``ini(name)``, else its default.

    Raises ``ValueError`` naming the source of a value that does not convert.
    """
    env = dict(os.environ) if env is None else env
    values: dict[str, Any] = {}
    given: set[str] = set()  # the settings given (not defaults)
    for name, convert in _CONVERTERS.items():
        variable = env_variable(name)
        for source, raw in (
            (f"--llmjudge-{name.replace('_', '-')}", cli(name)),
            (f"{variable} (environment)", env.get(variable)),
            (f"llmjudge_{name} (ini file)", ini(name)),
        ):
            if isinstance(raw, list):  # a repeated option, or an ini line list
                raw = "\n".join(str(item) for item in raw)
            if raw == "" and name in _NEVER_EMPTY and source.startswith("--"):
                raise ValueError(f"{source}: empty value; give {_NEVER_EMPTY[name]}, or leave the option out")
            if raw is None or raw == "":
                continue
            try:
                values[name] = convert(raw) if isinstance(raw, str) else raw
            except ValueError:
                raise ValueError(f"{source}: cannot read {raw!r} as {_KINDS[convert]}") from None
            if (problem := _invalid(name, values[name])) is not None:
                raise ValueError(f"{source}: {problem}")
            break
        else:
            values[name] = getattr(DEFAULTS, name)
            if name == "task_cache" and values["cache"] == "replay":
                values[name] = "replay"  # a replay calls no model, a task's neither, unless asked
            continue
        given.add(name)
    if values["batch"] != "off" and "concurrency" not in given:
        values["concurrency"] = BATCH_CONCURRENCY  # every call of the run joins a batch
    return RunSettings(**values)


def _invalid(name: str, value: Any) -> str | None:
    """What is wrong with a setting's value, or None."""
    if name == "cache" and value not in CACHE_MODES:
        return f"{value!r} is not one of {', '.join(CACHE_MODES)}"
    if name == "prompt_style" and value not in PROMPT_STYLES:
        return f"{value!r} is not one of {', '.join(PROMPT_STYLES)}"
    if name == "task_cache" and value not in TASK_CACHE_MODES:
        return f"{value!r} is not one of {', '.join(TASK_CACHE_MODES)}"
    if name == "judge_process" and value not in JUDGE_PROCESS_MODES:
        return f"{value!r} is not one of {', '.join(JUDGE_PROCESS_MODES)}"
    if name == "task" and not re.match(IMPORT_PATH, value):
        return f"{value!r} is not an import path 'package.module:function'"
    if name in {"concurrency", "attempts", "max_tokens", "task_concurrency", "max_response_bytes"} and (
        value < 1
    ):
        return f"must be at least 1, not {value}"
    if name in {"timeout", "rpm", "task_timeout"} and not value > 0:
        return f"must be a positive number of {'seconds' if name != 'rpm' else 'requests'}, not {value:g}"
    if name == "reduce" and value not in REDUCERS:
        return f"{value!r} is not one of {', '.join(REDUCERS)}"
    if name == "gate" and value not in GATE_RULES:
        return f"{value!r} is not one of {', '.join(GATE_RULES)}"
    if name == "fail_on" and value not in FAIL_ON:
        return f"{value!r} is not one of {', '.join(FAIL_ON)}"
    if name == "repeats" and value < 1:
        return f"must be at least 1, not {value}"
    if name == "margin" and not 0 < value < 1:
        return f"must lie strictly between 0 and 1, not {value:g}"
    if name == "alpha" and not 0 < value < 1:
        return f"must lie strictly between 0 and 1, not {value:g}"
    if name in {"min_tpr", "min_tnr"} and not 0 <= value <= 1:
        return f"must be a rate from 0 to 1, not {value:g}"
    if name == "min_labels" and value < 0:
        return f"must be 0 or more, not {value}"
    if name == "temperature" and not value >= 0:
        return f"must be 0 or more, not {value:g}"
    if name == "budget" and not 0 <= value < float("inf"):
        return f"must be a finite number of US dollars, 0 or more, not {value:g}"
    if name == "budget_tokens" and value < 0:
        return f"must be 0 or more tokens, not {value}"
    if name == "price":
        return _repeated_price(value)
    if name == "panel_rule" and value not in PANEL_RULES:
        return f"{value!r} is not one of {', '.join(PANEL_RULES)}"
    if name == "panel":
        return _panel_problem(value)
    if name == "batch" and value not in BATCH_MODES:
        # a bare --llmjudge-batch takes the next argument, a path too, as its value
        hint = " (a path right after a bare --llmjudge-batch is read as its value: write --llmjudge-batch=on)"
        return f"{value!r} is not one of {', '.join(BATCH_MODES)}{hint}"
    if name == "batch_wait" and not 0 < value < float("inf"):
        return f"must be a positive duration (seconds, or with s, m, h or d), not {value:g}"
    return None


def _panel_problem(items: tuple[str, ...]) -> str | None:
    try:
        return panel_problem(parse_members(items))
    except ValueError as exc:
        return str(exc)


def _repeated_price(prices: tuple[str, ...]) -> str | None:
    """A model priced twice with different prices: which one holds would be a guess."""
    seen: dict[str, str] = {}
    for price in prices:
        model, _, value = price.rpartition("=")  # as cost.pricing.parse_price_option reads it
        model, value = model.strip(), value.strip()
        if model and seen.setdefault(model, value) != value:
            return f"{model} is priced twice ({seen[model]} and {value}); give one price per model"
    return None


def prompt_style_for(benchmark: Benchmark, settings: RunSettings) -> str:
    """The prompt style of a benchmark's requests: its own ``judge.prompt_style``, else the run's."""
    judge = benchmark.spec.judge
    return (judge.prompt_style if judge and judge.prompt_style else None) or settings.prompt_style


def judge_setting(benchmark: Benchmark, settings: RunSettings, name: str) -> Any:
    """A benchmark's own ``judge.<name>`` (repeats, reduce, gate), else the run's."""
    judge = benchmark.spec.judge
    own = getattr(judge, name, None) if judge is not None else None
    return own if own is not None else getattr(settings, name)


def pairwise_mode(benchmark: Benchmark, settings: RunSettings) -> bool:
    """Whether a benchmark's cases are judged pairwise against a baseline output: its own
    ``judge.mode``, else ``--llmjudge-pairwise`` for benchmarks a judge decides alone."""
    judge = benchmark.spec.judge
    if judge is not None and judge.mode is not None:
        return judge.mode == "pairwise"
    return settings.pairwise and benchmark.spec.evaluator_type == "llm_judge"


def panel_for(benchmark: Benchmark, settings: RunSettings) -> Panel | None:
    """The panel judging ``benchmark``'s cases, or None for a single judge.

    A benchmark's own ``judge.panel`` wins; its own ``judge.model`` means a single judge even when
    the run has a panel; else the run's ``--llmjudge-panel``. Raises ``ValueError`` when the
    benchmark's ``min_members`` is larger than the run's panel.
    """
    own = benchmark.spec.judge
    if own is not None and own.panel:
        members = spec_members(own.panel)
    elif own is not None and own.model:
        return None
    elif settings.panel:
        members = parse_members(settings.panel)
    else:
        return None
    rule = (own.panel_rule if own is not None and own.panel_rule else None) or settings.panel_rule
    least = own.min_members if own is not None and own.min_members is not None else None
    if least is not None and least > len(members):
        raise ValueError(
            f"{benchmark.code}: judge.min_members is {least} but the panel has {len(members)} judges"
        )
    return Panel(members, rule, least if least is not None else default_min_members(len(members)))


def process_wanted(settings: RunSettings) -> bool:
    """Whether the run's own judge (``--llmjudge-model`` at ``--llmjudge-base-url``) will send its
    calls from the judge process: then the process is worth starting before collection."""
    model = settings.model or ""
    return (
        settings.judge_process == "on"
        and bool(model and settings.base_url)
        and model.split(":", 1)[0] != "local"
        and settings.cache != "replay"
        and settings.batch == "off"
    )
