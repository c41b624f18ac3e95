"""A pytest plugin for benchmarks: when each phase of a run began (``-p phase_clock``).

Writes ``time.time()`` of the run's milestones to the JSON file ``$BENCH_PHASES`` at exit:
``configured``, ``collection_started``, ``collection_finished``, ``first_item`` and
``last_item`` (pytest's run loop), ``session_finishing`` (the summary, gates and results file
start) and ``unconfigured``; and under ``cpu`` the CPU seconds each thread of the run used, by
thread name (on Linux, read from ``/proc`` every 0.2 s while the thread lives and once at the
end), which a loaded machine changes far less than wall times.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

_MARKS: dict[str, float] = {}
_CPU: dict[str, float] = {}  # thread name -> CPU seconds, the most seen
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_STOP = threading.Event()


def _read_cpu() -> None:
    for thread in threading.enumerate():
        try:
            fields = Path(f"/proc/self/task/{thread.native_id}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        seconds = (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
        name = thread.name if not thread.name.startswith(("asyncio_", "Thread-")) else "(workers)"
        key = f"{name}:{thread.native_id}" if name == "(workers)" else name
        _CPU[key] = max(_CPU.get(key, 0.0), seconds)


def _sample() -> None:
    while not _STOP.wait(0.2):
        _read_cpu()


def _mark(name: str) -> None:
    _MARKS.setdefault(name, time.time())


def pytest_configure(config: Any) -> None:
    _mark("configured")
    if Path("/proc/self/task").is_dir():
        threading.Thread(target=_sample, name="phase-clock", daemon=True).start()


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
    _read_cpu()
    _STOP.set()
    workers = sum(v for k, v in _CPU.items() if k.startswith("(workers)"))
    cpu = {k: round(v, 2) for k, v in _CPU.items() if not k.startswith("(workers)") and k != "phase-clock"}
    target = os.environ.get("BENCH_PHASES")
    if target:
        Path(target).write_text(json.dumps({**_MARKS, "cpu": {**cpu, "(workers)": round(workers, 2)}}))
