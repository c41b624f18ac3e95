"""A judge server's HTTP error is one plain line: status, URL and the server's message text."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic_ai.models
import pytest
from fake_openai import serve

BENCHMARK = """\
code: B1
concept: The output is right.
threshold: 0.5
cases:
  - {id: c0, source_narrative: n, candidate_output: o}
"""


@pytest.fixture
def failing_server() -> Iterator[str]:
    error = {"message": "model overloaded " + "x" * 300, "type": "server_error", "code": 500}
    with serve(status=500, error=error) as fake:
        yield f"{fake.url}/v1"


def test_an_http_error_names_status_url_and_message_in_one_line(
    pytester: pytest.Pytester, failing_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", "--llmjudge-cache=off",
        "--llmjudge-attempts=1", "--llmjudge-model=judge", f"--llmjudge-base-url={failing_server}",
    )  # fmt: skip
    result.assert_outcomes(passed=1, errors=1)
    line = f"HTTP 500 from {failing_server}/chat/completions: model overloaded {'x' * 150}"
    (error,) = [text for text in result.stdout.lines if "after 1 attempt: HTTP 500" in text]
    assert line in error and "{" not in error
