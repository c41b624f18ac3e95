"""A panel's cost and budget count every member's calls: repeats apply per member, each member's
tokens are priced as a single judge's, and a budget that stops the members says so once."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest
from fake_openai import FakeOpenAI
from test_panel import PanelHandler

MEMBERS = ("judge-a", "judge-b", "judge-c")


@pytest.fixture
def priced_server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(prompt_tokens=1000, completion_tokens=100)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (PanelHandler,), {"fake": fake}))
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    fake.url, fake._httpd = f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    try:
        yield fake
    finally:
        fake.stop()


def run(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "P1.yaml").write_text(
        "code: P1\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\ncases:\n"
        "  - {id: fine, candidate_output: 'all good'}\n  - {id: split, candidate_output: 'judge-b objects'}\n"
    )
    url = f"{fake.url}/v1"
    prices = [f"--llmjudge-price=openai:{m}@{url}=1/2" for m in MEMBERS]  # USD per million tokens
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        f"--llmjudge-base-url={url}",
        "--llmjudge-panel=" + ",".join(MEMBERS),
        "--llmjudge-results=run.json",
        "--llmjudge-cache=off",
        *prices,
        *args,
        "benchmarks",
    )


def test_repeats_apply_per_member_and_the_cost_counts_every_members_calls(
    pytester: pytest.Pytester, priced_server: FakeOpenAI
) -> None:
    result = run(pytester, priced_server, "--llmjudge-repeats=3")
    result.assert_outcomes(passed=2 + 1)
    assert len(priced_server.completions) == 2 * 3 * 3  # cases × members × samples
    data = json.loads((pytester.path / "run.json").read_text())
    per_call = (1000 * 1 + 100 * 2) / 1e6
    for case in data["benchmarks"][0]["cases"]:
        members = case["panel"]["members"]
        assert [m["samples"] for m in members] == [3, 3, 3]
        assert [m["input_tokens"] for m in members] == [3000, 3000, 3000]
        assert case["cost_usd"] == pytest.approx(9 * per_call)
    assert data["totals"]["cost"]["usd"] == pytest.approx(18 * per_call)
    assert "cost $0.0216" in result.stdout.str()


def test_a_budget_stops_every_member_and_says_so_once(
    pytester: pytest.Pytester, priced_server: FakeOpenAI
) -> None:
    result = run(pytester, priced_server, "--llmjudge-budget-tokens=100")  # less than any one call
    result.assert_outcomes(passed=1, errors=2)
    assert not priced_server.completions
    out = result.stdout.str()
    assert "only 0 of 3 panel judges answered, 2 needed: openai:judge-a@" in out
    assert "the budget stopped the run: 2 case(s) not judged (budget reached: spent 0 of 100 tokens)" in out
