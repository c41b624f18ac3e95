"""The names a case's repeated samples go by in the scheduler."""

from __future__ import annotations

SAMPLE_SEPARATOR = "\0sample "


def sample_key(nodeid: str, index: int) -> str:
    """The name sample ``index`` of a case goes by in the scheduler (sample 0: the node id)."""
    return f"{nodeid}{SAMPLE_SEPARATOR}{index}" if index else nodeid
