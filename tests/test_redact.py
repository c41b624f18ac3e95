"""Redaction reads an environment that pytest's main thread changes while judge calls run."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping

from pytest_llmjudge.judging.redact import REDACTED, redact
from pytest_llmjudge.judging.verdict import JudgeFailure


class ChangingEnvironment(Mapping[str, str]):
    """Loses a variable while it is being read, the first time: what ``os.environ`` does when the
    main thread deletes PYTEST_CURRENT_TEST during a judge call on the judging thread."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.reads = 0

    def __getitem__(self, name: str) -> str:
        self.reads += 1
        if self.reads == 1 and name == "PYTEST_CURRENT_TEST":
            raise KeyError(name)
        return self.values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.values))

    def __len__(self) -> int:
        return len(self.values)


def test_a_variable_deleted_while_reading_does_not_break_redaction() -> None:
    env = ChangingEnvironment({"PYTEST_CURRENT_TEST": "x (setup)", "OPENAI_API_KEY": "abcd-1234-secret"})
    assert redact("HTTP 401: key abcd-1234-secret refused", env) == f"HTTP 401: key {REDACTED} refused"


def test_failures_made_on_another_thread_while_the_environment_changes() -> None:
    """A judge failure is built on the judging thread; the main thread keeps changing os.environ."""
    import os

    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            os.environ["LLMJUDGE_CHURN_TEST"] = "1"
            os.environ.pop("LLMJUDGE_CHURN_TEST", None)

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        for _ in range(2000):
            JudgeFailure("http-500", "server said no")
    finally:
        stop.set()
        thread.join()
