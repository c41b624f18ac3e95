"""Run settings from command line, environment and ini file, in that order of precedence."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CACHE_MODES = ("use", "off", "refresh", "replay")


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
            (variable, env.get(variable)),
            (f"llmjudge_{name}", ini(name)),
        ):
            if raw is None or raw == "":
                continue
            try:
                values[name] = convert(raw) if isinstance(raw, str) else raw
            except ValueError:
                raise ValueError(f"{source}: cannot read {raw!r} as {convert.__name__}") from None
            break
        else:
            values[name] = getattr(DEFAULTS, name)
    settings = RunSettings(**values)
    if settings.cache not in CACHE_MODES:
        raise ValueError(f"--llmjudge-cache: {settings.cache!r} is not one of {', '.join(CACHE_MODES)}")
    if settings.concurrency < 1:
        raise ValueError("--llmjudge-concurrency must be at least 1")
    if settings.attempts < 1:
        raise ValueError("--llmjudge-attempts must be at least 1")
    return settings
