"""Judge calls to a model at a base URL are sent from a process of their own
(``--llmjudge-judge-process``): the verdicts, failures and timings are the same as from the pytest
process, the pytest process never loads the HTTP stack, and a judge process that dies ends its
calls as ERRORs instead of hanging the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
from conftest import Suite
from fake_openai import FakeOpenAI, benchmark_yaml, sent_text, serve

# Records, in the pytest process, whether it loaded the OpenAI SDK and which judge processes ran;
# with KILL_AT set, kills the judge process when that case's item starts.
CONFTEST = """
import json, os, signal, sys
from pathlib import Path

KILL_AT = {kill_at!r}
SEEN = set()


def judge_processes():
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\\0", b" ").decode()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and "pytest_llmjudge.models.judge_worker" in command:
            found.append(int(entry.name))
    return found


def pytest_runtest_setup(item):
    SEEN.update(judge_processes())
    if KILL_AT and item.nodeid.endswith(KILL_AT):
        for pid in judge_processes():
            os.kill(pid, signal.SIGKILL)


def pytest_unconfigure(config):
    Path("seen.json").write_text(json.dumps({{"openai": "openai" in sys.modules, "children": sorted(SEEN)}}))
"""


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with serve() as server:
        yield server


def run(suite: Suite, fake: FakeOpenAI, *args: str, kill_at: str | None = None) -> pytest.RunResult:
    (suite.root / "conftest.py").write_text(CONFTEST.format(kill_at=kill_at))
    return suite.pytester.runpytest_subprocess(
        "-p", "no:syrupy", "-p", "no:cacheprovider", "benchmarks", "--llmjudge-model=openai:fake-judge",
        f"--llmjudge-base-url={fake.url}/v1", "--llmjudge-attempts=1", "--llmjudge-cache=off", *args,
        timeout=120,  # a run that hangs fails here
    )  # fmt: skip


def seen(suite: Suite) -> dict[str, object]:
    found: dict[str, object] = json.loads((suite.root / "seen.json").read_text())
    return found


def test_judge_calls_are_sent_from_a_process_of_their_own_that_ends_with_the_run(
    bare_suite: Suite, fake: FakeOpenAI
) -> None:
    bare_suite.benchmark(
        "B1", benchmark_yaml(4).replace("candidate_output: o2}", "candidate_output: BADOUT}")
    )
    fake.answer = lambda body: {"reason": "checked", "pass": "BADOUT" not in sent_text(body)}
    result = run(bare_suite, fake)
    result.assert_outcomes(passed=4, failed=1)  # the prompt snapshot item and three cases pass
    result.stdout.fnmatch_lines(["FAILED benchmarks/a/B1.yaml::B1::c2 - FAIL: checked"])
    assert len(fake.completions) == 4
    found = seen(bare_suite)
    assert found["openai"] is False  # the HTTP stack lives in the judge process only
    children = found["children"]
    assert isinstance(children, list)
    (child,) = children
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # gone with the run

    # off: the same verdicts, sent from the pytest process
    result = run(bare_suite, fake, "--llmjudge-judge-process=off")
    result.assert_outcomes(passed=4, failed=1)
    assert seen(bare_suite) == {"openai": True, "children": []}


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a second judge process needs a second CPU")
def test_a_server_that_closes_each_connection_gets_a_second_judge_process(
    bare_suite: Suite, fake: FakeOpenAI
) -> None:
    bare_suite.benchmark("B1", benchmark_yaml(8))
    fake.headers = {"Connection": "close"}
    fake.delay = 0.2
    result = run(bare_suite, fake, "--llmjudge-concurrency=2")
    result.assert_outcomes(passed=9)
    assert len(fake.completions) == 8
    children = seen(bare_suite)["children"]
    assert isinstance(children, list) and len(children) == 2
    for child in children:
        with pytest.raises(ProcessLookupError):
            os.kill(child, 0)  # both gone with the run


def test_a_failure_in_the_judge_process_is_the_same_error_as_in_the_pytest_process(
    bare_suite: Suite, fake: FakeOpenAI
) -> None:
    bare_suite.benchmark("B1", benchmark_yaml(1))
    fake.status, fake.error = 401, {"message": "Incorrect API key provided"}
    for mode in ("on", "off"):
        result = run(bare_suite, fake, f"--llmjudge-judge-process={mode}")
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.fnmatch_lines(
            ["judge ERROR (http-401) after 1 attempt: HTTP 401 from *(check the API key): Incorrect API key*"]
        )


def test_a_judge_process_that_dies_ends_its_calls_as_errors_and_the_run_goes_on(
    bare_suite: Suite, fake: FakeOpenAI
) -> None:
    bare_suite.benchmark("B1", benchmark_yaml(4))
    fake.delay = 0.3  # one call at a time: c1's call is in flight when its item starts
    result = run(bare_suite, fake, "--llmjudge-concurrency=1", "-rA", kill_at="::c1")
    assert result.ret == 1
    result.assert_outcomes(passed=2, errors=3)  # the prompt item and c0
    died = "judge ERROR (judge-process) after 1 attempt: the judge process ended (exit status -9)"
    result.stdout.fnmatch_lines(["case c1 at *", died, "*", "case c2 at *", died, "*", "case c3 at *", died])
    assert len(fake.completions) <= 2  # c0's call, perhaps c1's: none after the process died


def test_an_unknown_judge_process_mode_is_a_usage_error(bare_suite: Suite, fake: FakeOpenAI) -> None:
    bare_suite.benchmark("B1", benchmark_yaml(1))
    result = run(bare_suite, fake, "--llmjudge-judge-process=auto")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llmjudge-judge-process: 'auto' is not one of on, off*"])
    assert fake.completions == []
