"""pytest-xdist: workers judge only their own items and share one verdict cache (pytester)."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

pytest.importorskip("xdist")

# Each call appends one short line (one write in append mode, so lines from the two worker
# processes never interleave) naming the case it judged.
CONFTEST = """
import asyncio
import os
import re

import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
LOG = os.path.join(os.path.dirname(__file__), "calls.log")


STATE = {"now": 0, "peak": 0}


async def judge(messages, info):
    texts = [getattr(p, "content", None) for m in messages for p in m.parts]
    prompt = "".join(t for t in texts if isinstance(t, str))
    case = re.search(r"case number ([0-9]+)", prompt).group(1)
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{case} {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\\n".encode())
    os.close(fd)
    STATE["now"] += 1
    STATE["peak"] = max(STATE["peak"], STATE["now"])
    await asyncio.sleep(0.05)
    STATE["now"] -= 1
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"pass": True, "reason": "fine"})])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="shared-judge")


def pytest_unconfigure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        with open(os.path.join(os.path.dirname(__file__), f"peak-{worker}.txt"), "w") as out:
            out.write(str(STATE["peak"]))
"""


def project(pytester: pytest.Pytester, files: int = 3, per_file: int = 8) -> int:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(CONFTEST)
    (pytester.path / "benchmarks").mkdir()
    number = 0
    for index in range(files):
        lines = [
            f"code: B-X{index}",
            "concept: The output is fine.",
            "inclusion_criteria: Apply always.",
            "cases:",
        ]
        for _ in range(per_file):
            lines += [f"  - id: c{number:03d}", f"    candidate_output: case number {number}"]
            number += 1
        (pytester.path / "benchmarks" / f"B-X{index}.yaml").write_text("\n".join(lines) + "\n")
    return number


def calls(pytester: pytest.Pytester) -> list[tuple[str, str]]:
    log = pytester.path / "calls.log"
    if not log.exists():
        return []
    return [(case, worker) for case, worker in (line.split() for line in log.read_text().splitlines())]


def test_two_workers_share_one_cache_and_judge_every_case_exactly_once(pytester: pytest.Pytester) -> None:
    cases = project(pytester)
    result = pytester.runpytest("-p", "no:syrupy", "-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=cases + 3)
    first = calls(pytester)
    assert sorted(Counter(case for case, _ in first).values()) == [1] * cases  # every case, once
    assert {worker for _, worker in first} == {"gw0", "gw1"}  # both workers judged
    peaks = [int((pytester.path / f"peak-{w}.txt").read_text()) for w in ("gw0", "gw1")]
    assert max(peaks) > 1  # a worker judges the items queued for it ahead, not one by one
    result.stdout.fnmatch_lines([f"judge: {cases} verdict(s), {cases} model call(s), 0 cache hit(s)*"])
    with sqlite3.connect(pytester.path / ".llmjudge" / "cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == cases
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    again = pytester.runpytest("-p", "no:syrupy", "-p", "no:cacheprovider", "-n", "2")
    again.assert_outcomes(passed=cases + 3)
    assert calls(pytester) == first  # nothing judged twice
    again.stdout.fnmatch_lines([f"judge: {cases} verdict(s), 0 model call(s), {cases} cache hit(s)*"])
