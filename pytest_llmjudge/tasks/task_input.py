"""What a Python task receives for one case, and what it may return."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TaskInput:
    """One case, as a task sees it (``task: "package.module:function"``).

    ``ground_truth`` is ``None`` unless the benchmark sets ``task_sees_ground_truth: true``: the
    system under test must not see the expected answer it is judged against.
    """

    id: str
    benchmark: str
    source_narrative: str | None
    inputs: Mapping[str, Any] = field(default_factory=dict)
    ground_truth: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


class TaskOutputError(Exception):
    """A task returned something that cannot be a candidate output."""


def output_value(value: Any, max_bytes: int | None = None) -> Any:
    """A task's return value as the candidate output: a string, a mapping (JSON values only) or a
    pydantic model (dumped as JSON values), of at most ``max_bytes`` (UTF-8 text, or compact JSON)."""
    import json

    if isinstance(value, str):
        _bounded(len(value.encode("utf-8", "surrogatepass")), max_bytes)
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump) and hasattr(type(value), "model_fields"):
        value = dump(mode="json")
    if not isinstance(value, Mapping):
        raise TaskOutputError(
            f"returned {type(value).__name__}; a task returns a string, a mapping or a pydantic model"
        )
    try:
        text = json.dumps(dict(value), allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise TaskOutputError(f"returned a mapping that is not JSON: {exc}") from None
    _bounded(len(text.encode("utf-8", "surrogatepass")), max_bytes)
    return json.loads(text)


def _bounded(size: int, max_bytes: int | None) -> None:
    """A larger output would fill the results file, the cache and the judge's context."""
    if max_bytes is not None and size > max_bytes:
        raise TaskOutputError(
            f"returned {size:,} bytes of output, more than --llmjudge-max-response-bytes={max_bytes}"
        )
