"""bench/phase_clock.py: a run's milestones and the CPU seconds each of its threads used."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

BENCH = str(Path(__file__).resolve().parents[1] / "bench")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="thread CPU is read from /proc")
def test_a_run_records_its_phases_and_each_threads_cpu(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_busy="""
        import threading, time

        def spin(seconds):
            end = time.thread_time() + seconds
            while time.thread_time() < end:
                pass

        def test_busy():
            worker = threading.Thread(target=spin, args=(0.3,), name="busy-worker")
            worker.start()
            time.sleep(0.5)  # the worker is seen alive at least once
            worker.join()
        """
    )
    marks = pytester.path / "phases.json"
    monkeypatch.setenv("BENCH_PHASES", str(marks))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([BENCH, *sys.path]))
    pytester.runpytest_subprocess("-p", "phase_clock", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    seen = json.loads(marks.read_text())
    order = ["configured", "collection_started", "collection_finished", "first_item", "session_finishing"]
    assert [seen[name] for name in order] == sorted(seen[name] for name in order)
    assert 0.1 <= seen["cpu"]["busy-worker"] <= 1.0  # sampled every 0.2 s while it lives
    assert seen["cpu"]["MainThread"] > 0
