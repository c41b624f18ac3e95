"""The judge's OpenAI client and chat model are made ready once (models/openai_adapter.py): no
worker thread per request for the platform header, no request preparation per call; and the
private OpenAI SDK names this relies on still exist."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from conftest import Suite
from fake_openai import benchmark_yaml, serve

from pytest_llmjudge.models import openai_adapter
from pytest_llmjudge.models.models import openai_compatible_model


@pytest.mark.parametrize("dotted", openai_adapter.PRIVATE_NAMES)
def test_each_private_name_still_exists(dotted: str) -> None:
    module, name = dotted.rsplit(".", 1)
    try:
        found = hasattr(importlib.import_module(module), name)
    except ModuleNotFoundError:  # a class attribute: module.Class.attribute, set by __init__
        module, owner = module.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), owner)
        from openai import AsyncOpenAI

        assert issubclass(AsyncOpenAI, cls)
        found = hasattr(AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k"), name)
    assert found, f"{dotted} is gone: update models/openai_adapter.py"


def test_the_client_knows_its_platform_and_names_it_in_its_headers() -> None:
    from openai._base_client import get_platform

    model: Any = openai_compatible_model("http://127.0.0.1:9/v1", "m")
    assert model.client._platform == get_platform()
    assert model.client.default_headers["X-Stainless-OS"] == str(get_platform())


def test_a_prepared_request_leaves_out_the_retries_the_client_has_already() -> None:
    from pydantic_ai.models import ModelRequestParameters

    model: Any = openai_compatible_model("http://127.0.0.1:9/v1", "m")
    assert model.client.max_retries == 0
    settings, params = model.prepare_request({"max_retries": 0, "temperature": 0.0}, ModelRequestParameters())
    assert settings == {"temperature": 0.0} and params.output_mode is not None
    settings, _ = model.prepare_request({"max_retries": 3}, ModelRequestParameters())
    assert settings == {"max_retries": 3}  # not the client's: the SDK copies the client for it


class _Params:
    pass


def test_a_request_is_prepared_once_for_the_same_settings_and_parameters() -> None:
    calls: list[tuple[Any, Any]] = []

    class Model:
        def prepare_request(self, settings: Any, params: Any) -> tuple[Any, Any]:
            calls.append((settings, params))
            return dict(settings or {}, prepared=True), params

    model = Model()
    openai_adapter.prepare_once(model)
    openai_adapter.prepare_once(model)  # twice is once
    settings, params = {"temperature": 0.0}, _Params()
    first = model.prepare_request(settings, params)
    assert model.prepare_request(settings, params) is first
    assert len(calls) == 1
    settings["temperature"] = 0.5  # the same object with another value is prepared again
    assert model.prepare_request(settings, params)[0] == {"temperature": 0.5, "prepared": True}
    model.prepare_request({"temperature": 0.5}, params)  # an equal copy: another object
    model.prepare_request(settings, _Params())
    model.prepare_request(None, params)
    assert model.prepare_request(None, params) is model.prepare_request(None, params)
    assert len(calls) == 5


CONFTEST = """
import json
import threading

from pydantic_ai.models.openai import OpenAIChatModel

PREPARED = []
THREADS = set()
_customize = OpenAIChatModel.customize_request_parameters


def counting(self, params):
    PREPARED.append(1)
    return _customize(self, params)


OpenAIChatModel.customize_request_parameters = counting


def pytest_runtest_logfinish(nodeid, location):
    THREADS.update(t.name for t in threading.enumerate())


def pytest_unconfigure(config):
    with open("seen.json", "w") as file:
        json.dump({"prepared": len(PREPARED), "threads": sorted(THREADS)}, file)
"""


def test_a_run_prepares_its_request_once_and_starts_no_thread_per_request(bare_suite: Suite) -> None:
    bare_suite.benchmark("B1", benchmark_yaml(40))
    (bare_suite.root / "conftest.py").write_text(CONFTEST)
    with serve() as fake:
        result = bare_suite.pytester.runpytest_subprocess(
            "-p",
            "no:syrupy",
            "-p",
            "no:cacheprovider",
            "benchmarks",
            "--llmjudge-model=openai:fake-judge",
            f"--llmjudge-base-url={fake.url}/v1",
            "--llmjudge-concurrency=8",
            "--llmjudge-judge-process=off",  # the calls made in this process, where the conftest counts
        )
        calls = len(fake.completions)
    result.assert_outcomes(passed=41)
    assert calls == 40
    seen = json.loads((bare_suite.root / "seen.json").read_text())
    # once for the captured request, once for the first call sending it: not once per call
    assert seen["prepared"] <= 2, seen
    assert "llmjudge-scheduler" in seen["threads"]
    assert not [name for name in seen["threads"] if name.startswith("asyncio_")], seen
