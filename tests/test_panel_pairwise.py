"""A panel of judges in pairwise mode: each member judges both orders of a case as a single
pairwise judge of its model would (and is cached as one), and the panel votes on the candidate's
outcome. Three judges behind a loopback OpenAI-compatible server, told apart by model name."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, _Handler, sent_text

from pytest_llmjudge.reporting.results_file import load_results_model
from pytest_llmjudge.reporting.results_records import records_of

MEMBERS = ("judge-a", "judge-b", "judge-c")


class PairHandler(_Handler):
    """Answers as the judge the request names: the output saying ``good-<judge>`` (or
    ``good-all``) is better; neither or both: a tie. ``judge-down`` refuses every request."""

    def _answer(self, fake: FakeOpenAI, auth: str | None, body: Any) -> None:
        model = body["model"]
        if model == "judge-down":
            super()._answer(replace(fake, status=400, error={"message": "no such model"}), auth, body)
            return
        text = sent_text(body)
        a = re.search(r"<OutputA>\n(.*?)\n</OutputA>", text, re.S)
        b = re.search(r"<OutputB>\n(.*?)\n</OutputB>", text, re.S)
        assert a and b, "a pairwise request"
        good_a, good_b = (f"good-{model}" in o[1] or "good-all" in o[1] for o in (a, b))
        winner = "tie" if good_a == good_b else "A" if good_a else "B"
        verdict = {"winner": winner, "reason": f"{model} picks {winner}"}
        super()._answer(replace(fake, verdict=verdict), auth, body)


@pytest.fixture
def pair_server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (PairHandler,), {"fake": fake}))
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    fake.url, fake._httpd = f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    try:
        yield fake
    finally:
        fake.stop()


# (candidate, baseline) and what each judge makes of it for the candidate
CASES = {
    "all-win": ("good-all one", "plain one"),  # win, win, win
    "ac-win": ("good-judge-a good-judge-c two", "plain two"),  # win, tie, win: split
    "all-loss": ("plain three", "good-all three"),  # loss, loss, loss
    "bc-loss": ("plain four", "good-judge-b good-judge-c four"),  # tie, loss, loss: split
    "no-majority": ("good-judge-a five", "good-judge-b five"),  # win, loss, tie: split
    "all-tie": ("plain six", "other six"),  # tie, tie, tie
}
SPLIT = ["ac-win", "bc-loss", "no-majority"]


def write_benchmark(root: Path, judge: str = "") -> None:
    lines = [
        f"  - {{id: {name}, candidate_output: '{candidate}', baseline_output: '{baseline}'}}"
        for name, (candidate, baseline) in CASES.items()
    ]
    (root / "benchmarks").mkdir(exist_ok=True)
    (root / "benchmarks" / "PW.yaml").write_text(
        "code: PW\nconcept: The output is good.\n"
        "inclusion_criteria: Apply always. Flag a bad output.\n"
        "threshold: 0.5\njudge:\n  mode: pairwise\n" + judge + "cases:\n" + "\n".join(lines) + "\n"
    )


def run(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        f"--llmjudge-base-url={fake.url}/v1",
        "--llmjudge-results=run.json",
        "-rA",
        "benchmarks",
        *args,
    )


def calls(fake: FakeOpenAI) -> dict[str, int]:
    return {m: sum(1 for r in fake.completions if r.body["model"] == m) for m in MEMBERS}


def test_a_pairwise_panel_judges_both_orders_per_member_and_votes_on_the_outcome(
    pytester: pytest.Pytester, pair_server: FakeOpenAI
) -> None:
    pytester.makeini("[pytest]\n")
    write_benchmark(pytester.path)
    panel = "--llmjudge-panel=" + ",".join(MEMBERS)

    estimate = run(pytester, pair_server, panel, "--llmjudge-estimate").stdout.str()
    assert "total: 36 calls" in estimate and not pair_server.completions  # 6 cases × 3 judges × 2 orders

    majority = run(pytester, pair_server, panel, "--llmjudge-html=report.html")
    assert calls(pair_server) == {"judge-a": 12, "judge-b": 12, "judge-c": 12}  # both orders each
    results = json.loads((pytester.path / "run.json").read_text())
    cases = {c["id"]: c for c in results["benchmarks"][0]["cases"]}
    outcomes = {name: c["pairwise"]["outcome"] for name, c in cases.items()}
    assert outcomes == {
        "all-win": "win",
        "ac-win": "win",  # 2 of 3
        "all-loss": "loss",
        "bc-loss": "loss",
        "no-majority": "inconsistent",  # no outcome has a majority: counted as a tie, reviewed
        "all-tie": "tie",
    }
    majority.assert_outcomes(passed=4 + 1, failed=2)  # a loss fails its item; and the prompt item
    # each member's outcome and reasons in the results file, its answers beside the others'
    members = cases["no-majority"]["panel"]["members"]
    assert [(m["model"].split("@")[0], m["outcome"], m["pass"]) for m in members] == [
        ("openai:judge-a", "win", True),
        ("openai:judge-b", "loss", False),
        ("openai:judge-c", "tie", True),
    ]
    assert "judge-b picks" in members[1]["reason"]
    assert cases["no-majority"]["panel"]["decision"] == "uncertain"
    assert len(cases["bc-loss"]["pairwise"]["answers"]) == 6  # both orders of each member
    assert cases["bc-loss"]["panel"]["decision"] == "fail"
    # the failure text names the vote and each member's outcome
    out = majority.stdout.str()
    assert (
        "pairwise: LOSS against the baseline output (from the case file), by the panel's vote (majority)"
        in out
    )
    assert re.search(r"openai:judge-a\S*: tie", out) and re.search(r"openai:judge-b\S*: loss", out)
    assert "PW::bc-loss - LOSS to the baseline: panel (majorit" in out  # the vote, in the short summary
    # the agreement over the outcomes: wins per member, split cases
    assert re.search(r"judge-a\S*: wins 50\.0 % \(3 of 6\)", out)
    assert re.search(r"judge-b\S*: wins 16\.7 % \(1 of 6\)", out)
    assert "6 cases, 3 split" in out
    agreement = results["benchmarks"][0]["panel"]
    assert agreement["split_cases"] == 3 and [m["passes"] for m in agreement["members"]] == [3, 1, 2]
    html = (pytester.path / "report.html").read_text()  # each member's outcome in the case's row
    assert re.search(r'"outcome":\s*"inconsistent"', html) and "m.outcome || verdict" in html
    assert re.search(r"judge-b@[^\"]*: candidate was A: ", html)  # each answer names its member
    # the split cases go to people, with every member's reason
    review = json.loads((pytester.path / ".llmjudge" / "review.json").read_text())["cases"]
    assert sorted(entry["case"] for entry in review) == SPLIT
    assert all(len(entry["panel"]["members"]) == 3 for entry in review)
    # the results file reads back (llmjudge merge): six answers a case, each member's outcome
    records = records_of(load_results_model(pytester.path / "run.json"))
    assert sorted(r.case for r in records if r.needs_review) == SPLIT
    rebuilt = next(r.panel for r in records if r.case == "no-majority")
    assert rebuilt is not None and [m.outcome for m in rebuilt.members] == ["win", "loss", "tie"]

    # unanimous: a win needs every member's, one loss is the panel's; every answer from the cache
    unanimous = run(pytester, pair_server, panel, "--llmjudge-panel-rule=unanimous")
    assert len(pair_server.completions) == 36
    unanimous.assert_outcomes(passed=3 + 1, failed=3)
    again = json.loads((pytester.path / "run.json").read_text())
    assert {c["id"]: c["pairwise"]["outcome"] for c in again["benchmarks"][0]["cases"]} == {
        "all-win": "win",
        "ac-win": "tie",
        "all-loss": "loss",
        "bc-loss": "loss",
        "no-majority": "loss",
        "all-tie": "tie",
    }
    # a single pairwise judge of a member's model reuses that member's cached answers
    single = run(pytester, pair_server, "--llmjudge-model=judge-b")
    single.assert_outcomes(passed=3 + 1, failed=3)  # judge-b alone: 1 win, 3 losses, 2 ties
    assert len(pair_server.completions) == 36


def test_a_pairwise_panel_member_that_errors_is_shown_and_too_few_answers_are_an_error(
    pytester: pytest.Pytester, pair_server: FakeOpenAI
) -> None:
    pytester.makeini("[pytest]\n")
    write_benchmark(pytester.path, "  panel: [judge-a, judge-c, judge-down]\n")
    result = run(pytester, pair_server)
    out = result.stdout.str()
    data = json.loads((pytester.path / "run.json").read_text())
    cases = {c["id"]: c for c in data["benchmarks"][0]["cases"]}
    assert cases["ac-win"]["pairwise"]["outcome"] == "win"  # the two that answered agree
    down = cases["ac-win"]["panel"]["members"][2]
    assert down["outcome"] is None and down["pass"] is None and "no such model" in down["error"]
    assert cases["no-majority"]["pairwise"]["outcome"] == "inconsistent"  # win against tie: no majority
    assert cases["bc-loss"]["pairwise"]["outcome"] == "inconsistent"  # tie against loss
    result.assert_outcomes(passed=5 + 1, failed=1)
    assert re.search(r"openai:judge-down\S*: ERROR http-400: .*no such model", out)  # in all-loss's text

    write_benchmark(pytester.path, "  panel: [judge-a, judge-c, judge-down]\n  min_members: 3\n")
    result = run(pytester, pair_server)
    result.assert_outcomes(passed=1, errors=6)
    out = result.stdout.str()
    assert re.search(r"only 2 of 3 panel judges answered, 3 needed: openai:judge-down\S*: http-400", out)


def test_a_pairwise_panel_whose_task_runs_first_judges_its_output_once_produced(
    pytester: pytest.Pytester, pair_server: FakeOpenAI
) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "app").mkdir()
    (pytester.path / "app" / "__init__.py").write_text("")
    (pytester.path / "app" / "produce.py").write_text(
        "def run(case):\n    return 'made ' + case.inputs['good']\n"
    )
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "PT.yaml").write_text(
        "code: PT\nconcept: The output is good.\ninclusion_criteria: Apply always. Flag a bad output.\n"
        "task: app.produce:run\njudge:\n  mode: pairwise\n  panel: [judge-a, judge-b, judge-c]\ncases:\n"
        "  - {id: ac-win, inputs: {good: good-judge-a good-judge-c}, baseline_output: plain}\n"
        "  - {id: b-loss, inputs: {good: nothing}, baseline_output: good-judge-b}\n"
    )
    result = run(pytester, pair_server)
    result.assert_outcomes(passed=2 + 1)  # b-loss: tie, loss, tie → a tie by the majority
    assert calls(pair_server) == {"judge-a": 4, "judge-b": 4, "judge-c": 4}
    cases = {
        c["id"]: c for c in json.loads((pytester.path / "run.json").read_text())["benchmarks"][0]["cases"]
    }
    assert cases["ac-win"]["pairwise"]["outcome"] == "win" and cases["b-loss"]["pairwise"]["outcome"] == "tie"
    assert [m["outcome"] for m in cases["b-loss"]["panel"]["members"]] == ["tie", "loss", "tie"]
    assert cases["ac-win"]["produced"]["output"] == "made good-judge-a good-judge-c"
