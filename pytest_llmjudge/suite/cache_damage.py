"""A damaged cache entry is a miss, said once: the warning both caches (verdicts, produced
outputs) give when an entry they hold cannot be read back, and the checks of a stored row."""

from __future__ import annotations

import contextlib
import math
import warnings
from pathlib import Path


class CacheDamageWarning(UserWarning):
    """A cache entry (or table) that cannot be read back: it is a miss, and is written again."""


def warn_damaged(path: Path, what: str) -> None:
    """One warning line naming the cache file and what in it is damaged."""
    message = f"{path}: {what}"
    # where warnings are errors (-W error) the entry is still a miss, never a crash
    with contextlib.suppress(CacheDamageWarning):
        warnings.warn(message, CacheDamageWarning, stacklevel=3)


def count(value: object, name: str) -> int:
    """A stored token count: a whole number, not negative; ``TypeError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{name} is {value!r}, not a count")
    return value


def seconds(value: object, name: str) -> float:
    """A stored duration: a finite number, not negative; ``TypeError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} is {value!r}, not a duration")
    if not math.isfinite(value) or value < 0:
        raise TypeError(f"{name} is {value!r}, not a duration")
    return float(value)
