"""Credentials never reach an output: neither those in a base URL (``http://user:pw@host/v1``,
``?api-key=…``) nor those a judge repeats in its verdict reason, whether or not they are in the
environment. Each test runs pytest against a fake OpenAI-compatible server and reads every
output a user sees: the terminal, JUnit XML, the results file, the HTML report, the cache file
and ``llmjudge cache stats``."""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Iterator

import pytest
from fake_openai import FakeOpenAI, benchmark_yaml, serve

USER_PASSWORD = "pw-0123456789userinfo"
QUERY_KEY = "q-0123456789querykey"
ENV_KEY = "sk-env-0123456789abcdefENVKEY"
BASIC = base64.b64encode(f"judge:{USER_PASSWORD}".encode()).decode()
UNLISTED = "tok-0123456789-not-in-the-environment"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with serve() as server:
        yield server


def outputs(pytester: pytest.Pytester, result: pytest.RunResult) -> dict[str, str]:
    """Everything the run left for a user to read, by name."""
    root = pytester.path
    found = {
        "terminal": result.stdout.str() + result.stderr.str(),
        "junit": (root / "out.xml").read_text(),
        "results": (root / "results.json").read_text(),
        "html": (root / "report.html").read_text(),
    }
    for path in sorted((root / ".llmjudge").glob("cache.sqlite*")):
        found[path.name] = path.read_bytes().decode("latin-1")
    stats = subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge.cli.main", "cache", "stats"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    found["cache stats"] = stats.stdout + stats.stderr
    return found


def run(pytester: pytest.Pytester, base_url: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\nllmjudge_attempts = 1\n")
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(benchmark_yaml(1))
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "--junitxml=out.xml",
        "--llmjudge-results=results.json",
        "--llmjudge-html=report.html",
        "--llmjudge-model=fake-judge",
        f"--llmjudge-base-url={base_url}",
        "benchmarks",
    )


def test_credentials_in_the_base_url_reach_no_output(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    host = fake.url.removeprefix("http://")
    fake.verdict = {"reason": "it is wrong", "pass": False}
    result = run(pytester, f"http://judge:{USER_PASSWORD}@{host}/v1?api-key={QUERY_KEY}&v=2")
    assert fake.completions, "the judge was called"
    seen = outputs(pytester, result)
    assert f"model: openai:fake-judge@http://{host}/v1?api-key=[redacted]&v=2" in seen["terminal"]
    assert "verdicts per model" in seen["cache stats"]
    for name, text in seen.items():
        for secret in (USER_PASSWORD, QUERY_KEY, BASIC):
            assert secret not in text, f"{secret} in the {name}"


def test_a_judge_repeating_credentials_in_its_reason_shows_none(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    reason = (
        f"the request came with key {ENV_KEY}, authorization: basic {BASIC}, "
        f"bearer {UNLISTED} and the URL http://judge:{USER_PASSWORD}@{fake.url[7:]}/v1?token={QUERY_KEY}"
    )
    fake.verdict = {"reason": reason, "pass": False}
    result = run(pytester, f"{fake.url}/v1")
    assert fake.completions and fake.completions[0].auth == f"Bearer {ENV_KEY}"
    seen = outputs(pytester, result)
    assert "the request came with key [redacted]" in seen["terminal"], seen["terminal"]
    for name, text in seen.items():
        for secret in (ENV_KEY, BASIC, UNLISTED, USER_PASSWORD, QUERY_KEY):
            assert secret not in text, f"{secret} in the {name}"
