"""Which judges answered a panel benchmark: each member's snapshot is recorded, a member whose
verdicts came from two snapshots makes the benchmark ``mixed judges``, and a baseline judged by
another snapshot of a member is ``judge changed``. A healthy panel, whose members are other models
by design, is none of these.

Three members behind one loopback OpenAI-compatible server, told apart by model name; each answers
as the snapshot ``SNAPSHOTS`` names for it (``judge-a`` → ``judge-a-2024-07-18``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
from fake_openai import FakeOpenAI, _Handler, benchmark_yaml

MEMBERS = ("judge-a", "judge-b", "judge-c")


class SnapshotHandler(_Handler):
    """Passes every case, answering as the snapshot ``fake.snapshots`` names for the request's model."""

    snapshots: dict[str, str]

    def _answer(self, fake: FakeOpenAI, auth: str | None, body: Any) -> None:
        super()._answer(replace(fake, model=self.snapshots[body["model"]]), auth, body)


@pytest.fixture
def snapshots() -> dict[str, str]:
    return {member: f"{member}-2024-07-18" for member in MEMBERS}


@pytest.fixture
def server(snapshots: dict[str, str]) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(system_fingerprint="fp_a")
    handler = type("H", (SnapshotHandler,), {"fake": fake, "snapshots": snapshots})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    fake.url, fake._httpd = f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    try:
        yield fake
    finally:
        fake.stop()


def _suite(pytester: pytest.Pytester, cases: int) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(benchmark_yaml(cases))


def _run(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", f"--llmjudge-base-url={fake.url}/v1",
        "--llmjudge-panel=" + ",".join(MEMBERS), "--llmjudge-attempts=1", "benchmarks", *args,
    )  # fmt: skip


def _judges(pytester: pytest.Pytester, name: str) -> list[tuple[str, str, str | None, int]]:
    (benchmark,) = json.loads((pytester.path / name).read_text())["benchmarks"]
    return sorted(
        (j["requested"].split("@")[0], j["model"], j["fingerprint"], j["verdicts"])
        for j in benchmark["judges"]
    )


def test_a_healthy_panel_lists_each_members_snapshot_and_is_not_mixed(
    pytester: pytest.Pytester, server: FakeOpenAI, snapshots: dict[str, str]
) -> None:
    _suite(pytester, 2)
    first = _run(pytester, server, "--llmjudge-results=base.json", "--llmjudge-fail-on=regression")
    assert first.ret == 0, first.stdout.str()
    assert "mixed judges" not in first.stdout.str()
    assert _judges(pytester, "base.json") == [(f"openai:{m}", f"{m}-2024-07-18", "fp_a", 2) for m in MEMBERS]
    # the same panel again, from the cache and compared with its first run: one judge throughout
    again = _run(pytester, server, "--llmjudge-baseline=base.json", "--llmjudge-fail-on=regression")
    assert again.ret == 0, again.stdout.str()
    assert "mixed judges" not in again.stdout.str() and "judge changed" not in again.stdout.str()

    # one member's alias moves: the comparison with the baseline measures that member's change
    snapshots["judge-b"] = "judge-b-2025-01-31"
    moved = _run(
        pytester, server, "--llmjudge-cache=refresh", "--llmjudge-baseline=base.json",
        "--llmjudge-results=now.json", "--llmjudge-fail-on=regression",
    )  # fmt: skip
    assert moved.ret == 1
    moved.stdout.fnmatch_lines(["*gate B1 failed: judge changed: *judge-b-2025-01-31*"])
    (comparison,) = json.loads((pytester.path / "now.json").read_text())["comparison"]
    assert comparison["verdict"] == "judge changed"
    assert (
        "judge-b-2024-07-18" in comparison["judge_change"]
        and "judge-b-2025-01-31" in comparison["judge_change"]
    )
    assert "mixed judges" not in moved.stdout.str()  # every verdict of this run is the new snapshot's


def test_a_member_whose_cached_verdicts_came_from_another_snapshot_makes_the_panel_mixed(
    pytester: pytest.Pytester, server: FakeOpenAI, snapshots: dict[str, str]
) -> None:
    _suite(pytester, 2)
    assert _run(pytester, server).ret == 0
    _suite(pytester, 3)  # one more case: its calls are answered today
    snapshots["judge-b"] = "judge-b-2025-01-31"
    result = _run(pytester, server, "--llmjudge-results=mixed.json")
    assert result.ret == 0, result.stdout.str()
    line = "*B1: mixed judges: 2 verdict(s) of openai:judge-b*2024-07-18*; 1 verdict(s) of *2025-01-31*"
    result.stdout.fnmatch_lines([line + "--llmjudge-fail-on*"])
    said = [text for text in result.outlines if "mixed judges:" in text]
    assert said and not any(
        f"openai:{m}" in text for text in said for m in ("judge-a", "judge-c")
    )  # only the member that mixed
    assert ("openai:judge-b", "judge-b-2025-01-31", "fp_a", 1) in _judges(pytester, "mixed.json")
    gated = _run(pytester, server, "--llmjudge-fail-on=regression")
    assert gated.ret == 1
    gated.stdout.fnmatch_lines(["*gate B1 failed: mixed judges: *judge-b*--llmjudge-cache=refresh*"])
    # the way out the message names: the member's stale verdicts are judged again, the others kept
    calls = len(server.completions)
    fixed = _run(pytester, server, "--llmjudge-rejudge-stale", "--llmjudge-fail-on=regression")
    assert fixed.ret == 0, fixed.stdout.str()
    assert "mixed judges" not in fixed.stdout.str()
    assert [r.body["model"] for r in server.completions[calls:]].count("judge-b") >= 2


def test_members_snapshots_reach_the_results_file_from_xdist_workers(
    pytester: pytest.Pytester, server: FakeOpenAI
) -> None:
    _suite(pytester, 2)
    result = _run(pytester, server, "-n", "2", "--llmjudge-results=run.json")
    assert result.ret == 0, result.stdout.str()
    assert _judges(pytester, "run.json") == [(f"openai:{m}", f"{m}-2024-07-18", "fp_a", 2) for m in MEMBERS]
