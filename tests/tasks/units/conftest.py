"""Each test renders with a sandbox built afresh, as a new process would: the compiled templates
and the environment that ``sandbox`` keeps for the life of a process are cleared first."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_llmjudge.tasks import prompt_template, sandbox


@pytest.fixture(autouse=True)
def _fresh_sandbox() -> Iterator[None]:
    sandbox.environment.cache_clear()
    sandbox.compile_template.cache_clear()
    prompt_template._variables.cache_clear()
    yield
