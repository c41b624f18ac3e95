"""Hooks that pytest-llmjudge adds to pytest (registered with ``pytest_addhooks``)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec(firstresult=True)
def pytest_llmjudge_model(config: pytest.Config) -> Any:
    """Return the judge model: a pydantic-ai ``Model`` object or a model string.

    Consulted last, after a benchmark's ``judge.model``, ``--llmjudge-model``, the
    ``LLMJUDGE_MODEL`` environment variable and the ``llmjudge_model`` ini option. This is how
    tests inject ``FunctionModel`` judges and how users plug in custom clients.
    """
