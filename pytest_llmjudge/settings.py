"""Run settings from command line, environment and ini file, in that order of precedence."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CACHE_MODES = ("use", "off", "refresh", "replay")

# name: (environment variable, converter, default)
_SOURCES: dict[str, tuple[str, Callable[[str], Any], Any]] = {
    "model": ("LLMJUDGE_MODEL", str, None),
    "base_url": ("LLMJUDGE_BASE_URL", str, None),
    "temperature": ("LLMJUDGE_TEMPERATURE", float, 0.0),
    "max_tokens": ("LLMJUDGE_MAX_TOKENS", int, None),
    "timeout": ("LLMJUDGE_TIMEOUT", float, 60.0),
    "prompt_style": ("LLMJUDGE_PROMPT_STYLE", str, "no_reasoning"),
    "concurrency": ("LLMJUDGE_CONCURRENCY", int, 16),
    "rpm": ("LLMJUDGE_RPM", float, None),
    "attempts": ("LLMJUDGE_ATTEMPTS", int, 4),
    "cache": ("LLMJUDGE_CACHE", str, "use"),
    "cache_path": ("LLMJUDGE_CACHE_PATH", str, ".llmjudge/cache.sqlite"),
    "review_file": ("LLMJUDGE_REVIEW_FILE", str, ".llmjudge/review.json"),
}


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


def option_names() -> tuple[str, ...]:
    return tuple(_SOURCES)


def resolve(
    cli: Callable[[str], Any], ini: Callable[[str], Any], env: dict[str, str] | None = None
) -> RunSettings:
    """Each setting from ``cli(name)``, else the environment, else ``ini(name)``, else its default.

    Raises ``ValueError`` naming the source of a value that does not convert.
    """
    env = dict(os.environ) if env is None else env
    values: dict[str, Any] = {}
    for name, (variable, convert, default) in _SOURCES.items():
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
            values[name] = default
    settings = RunSettings(**values)
    if settings.cache not in CACHE_MODES:
        raise ValueError(f"--llmjudge-cache: {settings.cache!r} is not one of {', '.join(CACHE_MODES)}")
    if settings.concurrency < 1:
        raise ValueError("--llmjudge-concurrency must be at least 1")
    if settings.attempts < 1:
        raise ValueError("--llmjudge-attempts must be at least 1")
    return settings
