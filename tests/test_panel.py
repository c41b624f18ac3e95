"""A panel of judges: its configuration in benchmark files and run options, and whole runs of a
three-judge panel behind a loopback OpenAI-compatible server, told apart by model name."""

from __future__ import annotations

import json
import re
import textwrap
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
from pytest_llmjudge.suite import files as spec
from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.panel_spec import PanelMember
from pytest_llmjudge.suite.settings import RunSettings, panel_for, resolve

HEAD = """\
code: P1
concept: The output is right.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
cases:
  - {id: c0, candidate_output: o}
"""


def load(tmp_path: Path, judge: str) -> spec.Benchmark:
    path = tmp_path / "benchmarks" / "P1.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(judge), encoding="utf-8")
    return spec.load_benchmark(path, "benchmarks/P1.yaml", tmp_path)


def test_a_benchmark_panel_with_its_own_server_per_member(tmp_path: Path) -> None:
    benchmark = load(
        tmp_path,
        """\
        judge:
          panel: [openai:a, {model: openai:b, base_url: "http://h:1/v1"}, local]
          panel_rule: unanimous
        """,
    )
    panel = panel_for(benchmark, RunSettings(panel=("openai:x", "openai:y")))
    assert panel is not None
    assert panel.members == (
        PanelMember("openai:a"),
        PanelMember("openai:b", "http://h:1/v1"),
        PanelMember("local"),
    )
    assert (panel.rule, panel.min_members) == ("unanimous", 2)  # min_members: a majority of 3
    assert panel.labels[1] == "openai:b@http://h:1/v1"


def test_the_run_panel_applies_where_a_benchmark_names_no_judge(tmp_path: Path) -> None:
    settings = RunSettings(panel=("openai:a", "openai:b@http://h:1/v1"), panel_rule="any")
    panel = panel_for(load(tmp_path, "judge: {min_members: 1}\n"), settings)
    assert panel is not None and (panel.rule, panel.min_members) == ("any", 1)
    assert panel.members[1] == PanelMember("openai:b", "http://h:1/v1")
    assert panel_for(load(tmp_path, "judge: {model: openai:one}\n"), settings) is None
    assert panel_for(load(tmp_path, ""), RunSettings()) is None
    with pytest.raises(ValueError, match="min_members is 3 but the panel has 2"):
        panel_for(load(tmp_path, "judge: {min_members: 3}\n"), settings)


@pytest.mark.parametrize(
    ("judge", "line", "message"),
    [
        ("judge:\n  panel: [openai:a]\n", 7, "a panel needs at least 2 judges, got 1"),
        ("judge:\n  panel:\n    - openai:a\n    - openai:a\n", 9, "openai:a is named twice"),
        ("judge:\n  model: openai:x\n  panel: [openai:a, openai:b]\n", 7, "one judge ('model') or a panel"),
        ("judge:\n  panel: [openai:a, openai:b]\n  min_members: 3\n", 8, "3 judges must answer"),
        ("judge:\n  panel: [openai:a, openai:b]\n  panel_rule: mean\n", 8, "panel_rule"),
    ],
)
def test_a_bad_panel_is_an_error_at_its_line(tmp_path: Path, judge: str, line: int, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        load(tmp_path, judge)
    assert caught.value.location.line == line
    assert message in caught.value.render()


def test_run_options_ini_and_environment() -> None:
    def settings(cli: dict[str, object], env: dict[str, str], ini: dict[str, object]) -> RunSettings:
        return resolve(lambda n: cli.get(n), lambda n: ini.get(n), env)

    assert settings({"panel": ["openai:a,openai:b", "openai:c"]}, {}, {}).panel == (
        "openai:a",
        "openai:b",
        "openai:c",
    )
    assert settings({}, {"LLMJUDGE_PANEL": "a,b", "LLMJUDGE_PANEL_RULE": "any"}, {}).panel_rule == "any"
    assert settings({}, {}, {"panel": ["a", "b@http://h/v1"], "panel_rule": "unanimous"}).panel == (
        "a",
        "b@http://h/v1",
    )
    cases: list[tuple[dict[str, object], str]] = [
        ({"panel": ["openai:a"]}, "--llmjudge-panel: a panel needs at least 2 judges, got 1"),
        ({"panel": ["a,a"]}, "--llmjudge-panel: a is named twice"),
        ({"panel": ["a,b@"]}, "is not a panel member 'MODEL' or 'MODEL@BASE_URL'"),
        ({"panel_rule": "mean"}, "--llmjudge-panel-rule: 'mean' is not one of majority, unanimous, any"),
    ]
    for cli, problem in cases:
        with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
            settings(cli, {}, {})


# -- whole runs: three judges behind one loopback server, told apart by model name ----------------

# The issue's 12 cases: 4 every judge passes, 4 only the second fails, 2 every judge fails, 2 the
# first and third fail. Each judge fails an output that names it (or "all").
KINDS = {"all-pass": "", "b-fails": "judge-b", "all-fail": "all", "ac-fail": "judge-a judge-c"}
COUNTS = {"all-pass": 4, "b-fails": 4, "all-fail": 2, "ac-fail": 2}
MEMBERS = ("judge-a", "judge-b", "judge-c")


class PanelHandler(_Handler):
    """Answers as the judge the request names: fail when the output names it or says ``all``."""

    def _answer(self, fake: FakeOpenAI, auth: str | None, body: Any) -> None:
        model = body["model"]
        # the case's output (the system prompt's examples have theirs on one line)
        found = re.search(r"<Output>\n(.*?)\n</Output>", sent_text(body), re.S)
        output = found.group(1) if found else ""
        if model == "judge-down":  # a member whose server refuses every request
            super()._answer(replace(fake, status=400, error={"message": "no such model"}), auth, body)
            return
        passed = model not in output and "fails all" not in output
        verdict = {"reason": f"{model} says {'fine' if passed else 'wrong'}", "pass": passed}
        super()._answer(replace(fake, verdict=verdict), auth, body)


@pytest.fixture
def panel_server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (PanelHandler,), {"fake": fake}))
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    fake.url, fake._httpd = f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    try:
        yield fake
    finally:
        fake.stop()


def issue_benchmark() -> str:
    lines = []
    for kind, count in COUNTS.items():
        names = KINDS[kind].replace("all", "fails all")
        label = "fail" if kind.endswith("fail") else "pass"  # the second judge is wrong on b-fails
        lines += [
            f"  - {{id: {kind}-{i}, candidate_output: '{kind} {i} {names}', label: {label}}}"
            for i in range(count)
        ]
    return (
        "code: P1\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        "threshold: 0.5\ncases:\n" + "\n".join(lines) + "\n"
    )


def run_panel(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        f"--llmjudge-base-url={fake.url}/v1",
        "--llmjudge-panel=" + ",".join(MEMBERS),
        "--llmjudge-results=run.json",
        "benchmarks",
        *args,
    )


def calls(fake: FakeOpenAI) -> dict[str, int]:
    return {m: sum(1 for r in fake.completions if r.body["model"] == m) for m in MEMBERS}


def test_a_three_judge_panel_votes_caches_per_judge_and_reports_agreement(
    pytester: pytest.Pytester, panel_server: FakeOpenAI
) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "P1.yaml").write_text(issue_benchmark())

    estimate = run_panel(pytester, panel_server, "--llmjudge-estimate").stdout.str()
    assert "total: 36 calls" in estimate and not panel_server.completions  # 12 per judge, none made
    assert re.search(r"P1 \(judge-b\S*\): 12 judge calls", estimate)

    majority = run_panel(pytester, panel_server, "--llmjudge-html=report.html")
    majority.assert_outcomes(passed=8 + 1, failed=4)  # and the prompt item
    assert calls(panel_server) == {"judge-a": 12, "judge-b": 12, "judge-c": 12}  # 36 calls
    out = majority.stdout.str()
    assert re.search(r"judge-a\S*: passes 66\.7 % \(8 of 12\)", out)
    assert re.search(r"judge-b\S*: passes 50\.0 % \(6 of 12\)", out)
    assert re.search(r"judge-c\S*: passes 66\.7 % \(8 of 12\)", out)
    assert "12 cases, 6 split, Fleiss' κ 0.30, effective judges 1.8 of 3" in out
    assert "Cohen's κ: 1–2 0.00, 1–3 1.00, 2–3 0.00" in out
    labels = (
        "members against 12 human labels: 1. TPR 1.00 TNR 1.00, 2. TPR 0.50 TNR 0.50, 3. TPR 1.00 TNR 1.00"
    )
    assert labels in out  # the weak member shows
    counts = re.search(r"12 verdict\(s\), (\d+) model call\(s\), 0 cache hit\(s\), (\d+) retr", out)
    assert counts and int(counts[1]) == 36 + int(counts[2])  # a loaded machine may drop a connection
    assert "no price known for openai:judge-a@" in out and "no price known for panel" not in out
    # the gate table counts the cases for review as the review file lists them: the 6 split
    assert re.search(r"P1\s+12\s+8\s+4 \(6 for review\)", out)
    # a failing case's text shows every member's verdict and reason
    assert "panel: 1 of 3 judges pass (majority)" in out and "judge-b says fine" in out

    review = json.loads((pytester.path / ".llmjudge" / "review.json").read_text())["cases"]
    split = sorted(entry["case"] for entry in review)
    assert split == sorted([f"b-fails-{i}" for i in range(4)] + ["ac-fail-0", "ac-fail-1"])
    reasons = [m["reason"] for m in review[0]["panel"]["members"]]
    assert len(reasons) == 3 and all(" says " in r for r in reasons)

    results = json.loads((pytester.path / "run.json").read_text())
    assert results["benchmarks"][0]["gate"]["review"] == 6
    agreement = results["benchmarks"][0]["panel"]
    assert [m["passes"] for m in agreement["members"]] == [8, 6, 8] and agreement["split_cases"] == 6
    assert round(agreement["fleiss_kappa"], 4) == 0.2987 and round(agreement["effective_judges"], 2) == 1.8
    cases = {c["id"]: c for c in results["benchmarks"][0]["cases"]}
    members = cases["ac-fail-0"]["panel"]["members"]
    assert [(m["model"].split("@")[0], m["pass"]) for m in members] == [
        ("openai:judge-a", False),
        ("openai:judge-b", True),
        ("openai:judge-c", False),
    ]

    html = (pytester.path / "report.html").read_text()
    assert '"decision"' in html and "judgesTable" in html  # each case's judges in its row

    unanimous = run_panel(pytester, panel_server, "--llmjudge-panel-rule=unanimous")
    unanimous.assert_outcomes(passed=4 + 1, failed=8)
    assert len(panel_server.completions) == 36  # every member's verdict came from the cache
    # the judge fingerprint a calibration is stored under covers the members and the rule
    judge = results["benchmarks"][0]["judge"]
    assert judge["model"].startswith("panel(majority, 2 of 3): openai:judge-a@")
    assert json.loads((pytester.path / "run.json").read_text())["benchmarks"][0]["judge"]["model"].startswith(
        "panel(unanimous, 2 of 3): "
    )

    again = run_panel(pytester, panel_server)
    again.assert_outcomes(passed=8 + 1, failed=4)
    assert len(panel_server.completions) == 36
    assert "12 verdict(s), 0 model call(s), 36 cache hit(s)" in again.stdout.str()

    # the records a merge of shards rebuilds from the results file keep each case's panel
    records = records_of(load_results_model(pytester.path / "run.json"))
    assert sorted(r.case for r in records if r.needs_review) == split
    ac_fail = next(r.panel for r in records if r.case == "ac-fail-0")
    assert ac_fail is not None and [m.passed for m in ac_fail.members] == [False, True, False]


def test_a_member_that_errors_is_shown_and_the_others_decide_unless_too_few_answer(
    pytester: pytest.Pytester, panel_server: FakeOpenAI
) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir()
    head = (
        "concept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\ncases:\n"
        "  - {id: fine, candidate_output: 'all good'}\n"
        "  - {id: split, candidate_output: 'judge-b objects'}\n"
    )
    panel = "judge:\n  panel: [judge-a, judge-b, judge-down]\n"
    (pytester.path / "benchmarks" / "P2.yaml").write_text("code: P2\n" + head + panel)
    (pytester.path / "benchmarks" / "P3.yaml").write_text("code: P3\n" + head + panel + "  min_members: 3\n")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        f"--llmjudge-base-url={panel_server.url}/v1",
        "-rA",
        "benchmarks",
    )
    out = result.stdout.str()
    # P2: the two that answered decide; their even split is uncertain (fails, goes to review)
    assert "PASSED benchmarks/P2.yaml::P2::fine" in out
    assert "FAILED benchmarks/P2.yaml::P2::split - uncertain, needs review: panel: 1 of 2" in out
    assert "reason: panel: 1 of 2 judges pass (majority, 1 errored)" in out
    assert re.search(r"judge-down\S*: ERROR http-400: .*no such model", out)
    # P3: three must answer, two did: each case is an ERROR naming the member that failed
    assert re.search(r"only 2 of 3 panel judges answered, 3 needed: openai:judge-down\S*: http-400", out)
    result.assert_outcomes(passed=2 + 1, failed=1, errors=2)  # P3's prompt item passes too
    review = json.loads((pytester.path / ".llmjudge" / "review.json").read_text())["cases"]
    assert [entry["case"] for entry in review] == ["split"]


def test_a_panel_benchmark_whose_task_must_run_first_runs_it_once_and_every_member_judges_it(
    pytester: pytest.Pytester, panel_server: FakeOpenAI
) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "app").mkdir()
    (pytester.path / "app" / "__init__.py").write_text("")
    (pytester.path / "app" / "produce.py").write_text(
        "from pathlib import Path\n\n"
        "def run(case):\n"
        "    with (Path(__file__).parent / 'runs.log').open('a') as log:\n"
        "        log.write(case.inputs['who'] + '\\n')\n"
        "    return 'made by ' + case.inputs['who']\n"
    )
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "P4.yaml").write_text(
        "code: P4\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        "task: app.produce:run\ncases:\n"
        "  - {id: one-objects, inputs: {who: judge-b}}\n"
        "  - {id: two-object, inputs: {who: judge-a judge-c}}\n"
        "judge:\n  panel: [judge-a, judge-b, judge-c]\n"
    )
    args = ("-p", "no:cacheprovider", "-p", "no:syrupy", f"--llmjudge-base-url={panel_server.url}/v1")
    result = pytester.runpytest_subprocess(*args, "--llmjudge-results=run.json", "-rA", "benchmarks")
    result.assert_outcomes(passed=1 + 1, failed=1)  # and the prompt item
    runs = (pytester.path / "app" / "runs.log").read_text().split("\n")
    assert sorted(filter(None, runs)) == ["judge-a judge-c", "judge-b"]  # each case's task once
    assert calls(panel_server) == {"judge-a": 2, "judge-b": 2, "judge-c": 2}  # every member judged it
    assert all("made by" in sent_text(r.body) for r in panel_server.completions)
    out = result.stdout.str()
    assert "FAILED benchmarks/P4.yaml::P4::two-object - " in out and "panel: 1 of 3 judges pass" in out
    cases = {
        c["id"]: c for c in json.loads((pytester.path / "run.json").read_text())["benchmarks"][0]["cases"]
    }
    assert cases["one-objects"]["produced"]["output"] == "made by judge-b"
    assert [m["pass"] for m in cases["one-objects"]["panel"]["members"]] == [True, False, True]

    again = pytester.runpytest_subprocess(*args, "benchmarks")  # the outputs and verdicts are cached
    again.assert_outcomes(passed=1 + 1, failed=1)
    assert len(panel_server.completions) == 6
    assert len(list(filter(None, (pytester.path / "app" / "runs.log").read_text().split("\n")))) == 2


def test_adding_a_member_calls_only_it_and_a_single_judge_reuses_a_members_verdicts(
    pytester: pytest.Pytester, panel_server: FakeOpenAI
) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "P5.yaml").write_text(
        "code: P5\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\ncases:\n"
        "  - {id: c0, candidate_output: 'one'}\n  - {id: c1, candidate_output: 'two judge-b'}\n"
    )
    args = ("-p", "no:cacheprovider", "-p", "no:syrupy", f"--llmjudge-base-url={panel_server.url}/v1")
    pytester.runpytest_subprocess(*args, "--llmjudge-panel=judge-a,judge-b", "benchmarks")
    assert calls(panel_server) == {"judge-a": 2, "judge-b": 2, "judge-c": 0}
    pytester.runpytest_subprocess(*args, "--llmjudge-panel=judge-a,judge-b,judge-c", "benchmarks")
    assert calls(panel_server) == {"judge-a": 2, "judge-b": 2, "judge-c": 2}  # only the new member
    single = pytester.runpytest_subprocess(*args, "--llmjudge-model=judge-b", "benchmarks")
    single.assert_outcomes(passed=2, failed=1)  # judge-b alone, from the cache its panel run filled
    assert len(panel_server.completions) == 6


def test_a_member_with_its_own_base_url_is_called_there(
    pytester: pytest.Pytester, panel_server: FakeOpenAI
) -> None:
    other = FakeOpenAI()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (PanelHandler,), {"fake": other}))
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    other.url, other._httpd = f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    try:
        pytester.makeini("[pytest]\n")
        (pytester.path / "benchmarks").mkdir()
        (pytester.path / "benchmarks" / "P6.yaml").write_text(
            "code: P6\nconcept: The output is right.\n"
            "inclusion_criteria: Apply when there is output. Flag if it is wrong.\ncases:\n"
            "  - {id: c0, candidate_output: 'one'}\n  - {id: c1, candidate_output: 'two judge-b'}\n"
            f"judge:\n  panel: [judge-a, {{model: judge-b, base_url: '{other.url}/v1'}}, judge-c]\n"
        )
        args = ("-p", "no:cacheprovider", "-p", "no:syrupy", f"--llmjudge-base-url={panel_server.url}/v1")
        result = pytester.runpytest_subprocess(*args, "benchmarks")
        result.assert_outcomes(passed=2 + 1)
        assert calls(panel_server) == {"judge-a": 2, "judge-b": 0, "judge-c": 2}
        assert calls(other) == {"judge-a": 0, "judge-b": 2, "judge-c": 0}  # on its own server
    finally:
        other.stop()
