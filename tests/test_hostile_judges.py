"""Judge servers that misbehave: echo secrets, answer 5xx, ask for hour-long pauses, give verdicts
of the wrong type. Each test runs pytest against a fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, benchmark_yaml, serve

SECRET = "sk-test-0123456789abcdefSECRET"
OTHER_TOKEN = "ghp-other-token-value-42"

BENCHMARK = benchmark_yaml(1)


@pytest.fixture
def server() -> Iterator[tuple[str, FakeOpenAI]]:
    with serve("0.0.0.0") as fake:  # 127.0.0.2 reaches it too
        yield f"{fake.url}/v1", fake


@pytest.fixture
def other_server() -> Iterator[tuple[str, FakeOpenAI]]:
    with serve() as fake:
        yield f"{fake.url}/v1", fake


def run(pytester: pytest.Pytester, url: str, *args: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\nllmjudge_attempts = 2\n")
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "--llmjudge-cache=off",
        "--junitxml=out.xml",
        "-rA",
        "--llmjudge-model=fake-judge",
        f"--llmjudge-base-url={url}",
        "benchmarks",
        *args,
    )


@pytest.mark.parametrize("status", [400, 500])
def test_an_error_body_echoing_the_api_key_never_shows_it(
    pytester: pytest.Pytester, server: tuple[str, FakeOpenAI], monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    url, fake = server
    fake.status = status
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", OTHER_TOKEN)
    result = run(pytester, url)
    out = result.stdout.str() + result.stderr.str()
    assert fake.completions and fake.completions[0].auth == f"Bearer {SECRET}"  # it was sent...
    assert "judge ERROR" in out and "[redacted]" in out  # ...and the error is shown...
    for text in (out, (pytester.path / "out.xml").read_text()):
        assert SECRET not in text and "Bearer sk-" not in text  # ...without the key


def test_each_attempt_is_one_request(pytester: pytest.Pytester, server: tuple[str, FakeOpenAI]) -> None:
    url, fake = server
    fake.status = 500
    run(pytester, url)
    assert len(fake.completions) == 2  # llmjudge_attempts = 2, and no SDK retries on top


def test_an_hour_long_retry_after_ends_the_case_instead_of_stalling_the_run(
    pytester: pytest.Pytester, server: tuple[str, FakeOpenAI]
) -> None:
    url, fake = server
    fake.status = 429
    fake.headers = {"Retry-After": "3600"}
    result = run(pytester, url)
    assert "Retry-After 3600 s exceeds the 60 s cap" in result.stdout.str()
    assert len(fake.completions) == 1


@pytest.mark.parametrize("value", ["yes", "on", 1, 1.0, "false", 0])
def test_a_verdict_that_is_not_a_json_boolean_is_invalid_output(
    pytester: pytest.Pytester, server: tuple[str, FakeOpenAI], value: Any
) -> None:
    url, fake = server
    fake.verdict = {"reason": "fine", "pass": value}
    result = run(pytester, url)
    out = result.stdout.str()
    assert "judge ERROR (invalid-output) after 2 attempts" in out, out
    assert "1 error" in out


def test_a_benchmark_base_url_off_the_run_gets_no_api_key(
    pytester: pytest.Pytester, server: tuple[str, FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, fake = server
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    # 127.0.0.2 is this machine too, but not a name the key may go to unasked
    elsewhere = url.replace("127.0.0.1", "127.0.0.2")
    pytester.makeini("[pytest]\nllmjudge_attempts = 1\n")
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(
        BENCHMARK + f"judge: {{model: fake-judge, base_url: '{elsewhere}'}}\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-cache=off", "benchmarks"
    )
    assert [r.auth for r in fake.completions] == ["Bearer no-key-needed"]
    out = result.stdout.str()
    assert out.count("the API key is not sent there") == 1, out


def test_a_json_boolean_verdict_passes_with_one_request(
    pytester: pytest.Pytester, server: tuple[str, FakeOpenAI]
) -> None:
    url, fake = server
    result = run(pytester, url)
    assert "2 passed" in result.stdout.str() and len(fake.completions) == 1


def test_verdicts_of_one_server_never_answer_for_another_serving_the_same_model_name(
    pytester: pytest.Pytester, server: tuple[str, FakeOpenAI], other_server: tuple[str, FakeOpenAI]
) -> None:
    (url_a, a), (url_b, b) = server, other_server
    b.verdict = {"reason": "server B disagrees", "pass": False}
    cached = ["-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-model=fake-judge", "benchmarks"]
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    assert "2 passed" in pytester.runpytest_subprocess(*cached, f"--llmjudge-base-url={url_a}").stdout.str()
    result = pytester.runpytest_subprocess(*cached, f"--llmjudge-base-url={url_b}")
    assert len(a.completions) == len(b.completions) == 1  # B was asked, not answered with A's verdict
    assert "server B disagrees" in result.stdout.str()


def test_a_gguf_judge_label_changes_with_the_file_not_just_its_name(tmp_path: Path) -> None:
    from pytest_llmjudge.models.models import judge_label

    model = tmp_path / "judge.gguf"
    model.write_bytes(b"GGUF" + bytes(3 << 20))
    first = judge_label(f"local:{model}")
    assert first.startswith("local:judge#")
    model.write_bytes(b"GGUF" + bytes(3 << 20) + b"retrained")
    assert judge_label(f"local:{model}") != first


@pytest.mark.parametrize(
    ("knobs", "cause"),
    [({"status": 500}, "http-500"), ({"verdict": {"reason": "fine", "pass": "yes"}}, "invalid-output")],
)
def test_the_judge_line_says_what_the_retries_were_for(
    pytester: pytest.Pytester, server: tuple[str, FakeOpenAI], knobs: dict[str, Any], cause: str
) -> None:
    url, fake = server
    for name, value in knobs.items():
        setattr(fake, name, value)
    result = run(pytester, url)
    # two requests went out: both count as model calls, though neither gave a verdict
    result.stdout.fnmatch_lines(
        [f"judge: 0 verdict(s), 2 model call(s), 0 cache hit(s), 1 retry ({cause}), 1 error(s)*"]
    )
