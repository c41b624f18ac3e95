"""Run settings from command line, environment and ini file, in that order of precedence."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .vocabulary import CACHE_MODES, PROMPT_STYLES

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
}
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
    for name, convert in _CONVERTERS.items():
        variable = env_variable(name)
        for source, raw in (
            (f"--llmjudge-{name.replace('_', '-')}", cli(name)),
            (f"{variable} (environment)", env.get(variable)),
            (f"llmjudge_{name} (ini file)", ini(name)),
        ):
            if raw is None or raw == "":
                continue
            try:
                values[name] = convert(raw) if isinstance(raw, str) else raw
            except ValueError:
                raise ValueError(f"{source}: cannot read {raw!r} as {convert.__name__}") from None
            if (problem := _invalid(name, values[name])) is not None:
                raise ValueError(f"{source}: {problem}")
            break
        else:
            values[name] = getattr(DEFAULTS, name)
    return RunSettings(**values)


def _invalid(name: str, value: Any) -> str | None:
    """What is wrong with a setting's value, or None."""
    if name == "cache" and value not in CACHE_MODES:
        return f"{value!r} is not one of {', '.join(CACHE_MODES)}"
    if name == "prompt_style" and value not in PROMPT_STYLES:
        return f"{value!r} is not one of {', '.join(PROMPT_STYLES)}"
    if name in {"concurrency", "attempts", "max_tokens"} and value < 1:
        return f"must be at least 1, not {value}"
    if name in {"timeout", "rpm"} and not value > 0:
        return f"must be a positive number of {'seconds' if name == 'timeout' else 'requests'}, not {value:g}"
    if name == "temperature" and not value >= 0:
        return f"must be 0 or more, not {value:g}"
    return None


def prompt_style_for(benchmark: Benchmark, settings: RunSettings) -> str:
    """The prompt style of a benchmark's requests: its own ``judge.prompt_style``, else the run's."""
    judge = benchmark.spec.judge
    return (judge.prompt_style if judge and judge.prompt_style else None) or settings.prompt_style
