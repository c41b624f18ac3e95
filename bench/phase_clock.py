"""A pytest plugin for benchmarks: when each phase of a run began (``-p phase_clock``).

Writes ``time.time()`` of the run's milestones to the JSON file ``$BENCH_PHASES`` at exit:
``configured``, ``collection_started``, ``collection_finished``, ``first_item`` and
``last_item`` (pytest's run loop), ``session_finishing`` (the summary, gates and results file
start) and ``unconfigured``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

_MARKS: dict[str, float] = {}


def _mark(name: str) -> None:
    _MARKS.setdefault(name, time.time())


def pytest_configure(config: Any) -> None:
    _mark("configured")


def pytest_collection(session: Any) -> None:
    _mark("collection_started")


def pytest_collection_finish(session: Any) -> None:
    _mark("collection_finished")


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _mark("first_item")
    _MARKS["last_item"] = time.time()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    _mark("session_finishing")


def pytest_unconfigure(config: Any) -> None:
    _mark("unconfigured")
    target = os.environ.get("BENCH_PHASES")
    if target:
        Path(target).write_text(json.dumps(_MARKS))
