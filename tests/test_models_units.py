"""In-process unit tests of ``pytest_llmjudge/models/``: what a failed judge call was (``classify``,
``failure``), who answered (``answered``, ``identity``), the judge's model strings, label, settings
and OpenAI-compatible model (``models``, ``openai_adapter``), the captured request (``config``),
the run's judge choices (``judges``) and batched judges (``batching``, ``pending_batches``).

Nothing here reaches a hosted model: pydantic-ai's ``FunctionModel`` and the loopback fake server
(``fake_openai``) answer, and ``ALLOW_MODEL_REQUESTS`` stays off outside the fake server's tests.
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import re
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2 as httpx
import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, serve
from pydantic_ai.exceptions import (
    ContentFilterError,
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelServerError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import FunctionModel

from pytest_llmjudge.cost.usage import Usage
from pytest_llmjudge.models import models as judge_models
from pytest_llmjudge.models import openai_adapter
from pytest_llmjudge.models.answered import Answered
from pytest_llmjudge.models.classify import classify
from pytest_llmjudge.models.config import JudgeConfig, RequestTemplate
from pytest_llmjudge.models.failure import CarriedFailure, JudgeFailure
from pytest_llmjudge.models.identity import answered_by, with_fingerprint
from pytest_llmjudge.models.models import (
    ModelConfigError,
    build_model,
    compatible_profile,
    judge_label,
    key_allowed,
    model_file_digest,
    model_label,
    model_settings,
    openai_compatible_model,
    replay_only_model,
)
from pytest_llmjudge.models.response_cap import UnreadableResponse

SECRET = "sk-abcdef123456789"


def _chained(outer: BaseException, inner: BaseException) -> BaseException:
    """``outer`` raised from ``inner`` (``raise outer from inner``)."""
    outer.__cause__ = inner
    return outer


def _request_error(url: str, message: str = "All connection attempts failed") -> httpx.ConnectError:
    return httpx.ConnectError(message, request=httpx.Request("POST", url))


# --- failure.py ----------------------------------------------------------------------------------


def test_a_failure_reads_as_its_kind_and_message_and_is_not_transient_by_default() -> None:
    failure = JudgeFailure("timeout", "the judge call timed out")
    assert str(failure) == "timeout: the judge call timed out"
    assert (failure.transient, failure.retry_after, failure.usage) == (False, None, None)


def test_a_failure_message_never_carries_a_secret() -> None:
    failure = JudgeFailure("http-401", f"the server echoed Authorization: Bearer {SECRET}")
    assert failure.message == "the server echoed Authorization: Bearer [redacted]"
    assert str(failure) == "http-401: the server echoed Authorization: Bearer [redacted]"


def test_a_carried_failure_reads_as_the_failure_it_carries() -> None:
    failure = JudgeFailure("rate-limited", "slow down", True, 2.0)
    carried = CarriedFailure(failure)
    assert str(carried) == "rate-limited: slow down"
    assert carried.failure is failure


# --- classify.py ---------------------------------------------------------------------------------


def test_a_judge_failure_is_its_own_classification_usage_and_all() -> None:
    failure = JudgeFailure("truncation", "cut", usage=Usage(requests=1, input_tokens=10, output_tokens=5))
    assert classify(failure) is failure


def test_a_failure_carried_anywhere_in_the_chain_is_the_failure() -> None:
    failure = JudgeFailure("http-500", "from the judge process", True, 1.5)
    wrapped = _chained(RuntimeError("agent run"), _chained(ValueError("sdk"), CarriedFailure(failure)))
    assert classify(wrapped) is failure
    unreadable = UnreadableResponse("response-too-large", "the answer is over 100 bytes")
    context = RuntimeError("read")
    context.__context__ = unreadable
    assert classify(context) == JudgeFailure("response-too-large", "the answer is over 100 bytes")


@pytest.mark.parametrize(
    ("status", "kind", "hint", "transient"),
    [
        (400, "http-400", " (bad request)", False),
        (401, "http-401", " (check the API key)", False),
        (403, "http-403", " (access denied)", False),
        (404, "http-404", "", False),
        (407, "http-407", "", False),
        (408, "http-408", "", True),
        (409, "http-409", "", True),
        (410, "http-410", "", False),
        (425, "http-425", "", True),
        (429, "rate-limited", "", True),
        (499, "http-499", "", False),
        (500, "http-500", "", True),
        (503, "http-503", "", True),
    ],
)
def test_an_http_error_says_its_status_where_from_and_whether_to_retry(
    status: int, kind: str, hint: str, transient: bool
) -> None:
    error = ModelHTTPError(status, "gpt-x", {"error": {"message": "went wrong"}})
    assert classify(error) == JudgeFailure(kind, f"HTTP {status} from gpt-x{hint}: went wrong", transient)


def test_a_429_is_transient_and_keeps_its_retry_after() -> None:
    error = ModelHTTPError(429, "gpt-x", {"error": {"message": "slow down"}}, retry_after=2.5)
    assert classify(error) == JudgeFailure("rate-limited", "HTTP 429 from gpt-x: slow down", True, 2.5)


def test_an_http_error_names_the_url_of_its_request_over_the_model() -> None:
    first = _request_error("http://judge.example:8000/v1/chat/completions")
    second = _request_error("http://other.example/v1")
    first.__context__ = second
    error = _chained(ModelHTTPError(502, "gpt-x", "Bad Gateway"), first)
    assert classify(error) == JudgeFailure(
        "http-502", "HTTP 502 from http://judge.example:8000/v1/chat/completions: Bad Gateway", True
    )


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"error": {"message": "model not found"}}, "model not found"),
        ({"message": "model not found"}, "model not found"),
        ({"error": "model not found"}, "model not found"),
        ({"detail": "model not found"}, "model not found"),
        ({"error": {"error": {"message": "deep"}}}, "deep"),
        ({"error": {"error": {"error": {"message": "too deep"}}}}, '{"message": "too deep"}'),
        ({"code": 5}, '{"code": 5}'),
        ({"error": {"code": Decimal("1.5")}}, '{"code": "1.5"}'),
        (None, "null"),
        (["a", 1], '["a", 1]'),
        ("line one\n\n  line\ttwo ", "line one line two"),
        ("x" * 200, "x" * 200),
        ("x" * 201, "x" * 199 + "…"),
    ],
)
def test_an_http_error_body_is_its_message_on_one_short_line(body: object, text: str) -> None:
    assert classify(ModelHTTPError(404, "m", body)).message == f"HTTP 404 from m: {text}"


def test_an_http_error_body_echoing_the_key_shows_none_of_it() -> None:
    body = {"error": {"message": f"bad request; you sent Authorization: Bearer {SECRET}"}}
    assert classify(ModelHTTPError(400, "m", body)) == JudgeFailure(
        "http-400", "HTTP 400 from m (bad request): bad request; you sent Authorization: Bearer [redacted]"
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            ModelRateLimitError("m", "too many requests", retry_after=3.0),
            JudgeFailure("rate-limited", "too many requests", True, 3.0),
        ),
        (
            ModelRequestRejectedError("m", "prompt rejected", retry_after=3.0),
            JudgeFailure("rejected", "prompt rejected", False),
        ),
        (
            ModelConnectionError("m", "connection reset", retry_after=4.0),
            JudgeFailure("transport", "connection reset", True, 4.0),
        ),
        (ModelServerError("m", "overloaded"), JudgeFailure("transport", "overloaded", True)),
        (ModelUnavailableError("m", "unavailable"), JudgeFailure("transport", "unavailable", True)),
        (
            ModelAPIError("m", "odd answer", retry_after=1.0),
            JudgeFailure("api-error", "odd answer", False, 1.0),
        ),
        (
            ContentFilterError("filtered"),
            JudgeFailure("refusal", "the judge refused to answer: filtered", False),
        ),
        (
            UnexpectedModelBehavior("bad json"),
            JudgeFailure("invalid-output", "judge output did not validate: bad json", True),
        ),
        (TimeoutError(), JudgeFailure("timeout", "the judge call timed out", True)),
        (
            ConnectionResetError("reset by peer"),
            JudgeFailure("transport", "ConnectionResetError: reset by peer", True),
        ),
        (OSError("no route"), JudgeFailure("transport", "OSError: no route", True)),
        (ValueError("odd"), JudgeFailure("judge-error", "ValueError: odd", False)),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else "",
)
def test_each_kind_of_failed_call_and_whether_a_retry_can_help(
    error: BaseException, expected: JudgeFailure
) -> None:
    assert classify(error) == expected


def test_a_usage_limit_is_not_worth_retrying() -> None:
    error = UsageLimitExceeded("request limit of 1")
    assert classify(error) == JudgeFailure("usage-limit", str(error), False)


def test_a_transport_error_names_the_url_it_was_for() -> None:
    error = _chained(ModelConnectionError("m", "connection reset"), _request_error("http://h:8000/v1/x"))
    assert classify(error) == JudgeFailure("transport", "connection reset (http://h:8000/v1/x)", True)


def test_a_refused_connection_is_not_worth_retrying_and_names_where() -> None:
    bare = _chained(
        ModelConnectionError("m", "cannot connect", retry_after=5.0), ConnectionRefusedError(111, "x")
    )
    assert classify(bare) == JudgeFailure("connection-refused", "connection refused by the judge server")
    with_url = _chained(ModelConnectionError("m", "cannot connect"), _request_error("http://127.0.0.1:9/v1"))
    with_url.__cause__.__cause__ = ConnectionRefusedError(111, "x")  # type: ignore[union-attr]
    assert classify(with_url) == JudgeFailure(
        "connection-refused", "connection refused by http://127.0.0.1:9/v1"
    )


def test_a_refusal_in_the_errors_context_counts_too() -> None:
    error = ModelConnectionError("m", "cannot connect")  # raised while handling the refusal
    error.__context__ = _request_error("http://127.0.0.1:9/v1")
    error.__context__.__context__ = ConnectionRefusedError(111, "x")
    assert classify(error) == JudgeFailure(
        "connection-refused", "connection refused by http://127.0.0.1:9/v1"
    )


def test_a_refusal_is_found_by_its_text_in_any_case() -> None:
    error = ModelServerError("m", "Connection REFUSED by peer")
    assert classify(error) == JudgeFailure("connection-refused", "connection refused by the judge server")


def test_an_error_without_its_request_or_in_a_loop_still_classifies() -> None:
    no_request = httpx.ConnectError("[Errno 104] reset")  # its .request raises RuntimeError
    error = _chained(ModelConnectionError("m", "reset"), no_request)
    no_request.__cause__ = error  # a chain that loops back
    assert classify(error) == JudgeFailure("transport", "reset", True)
    looping = RuntimeError("loop")
    looping.__context__ = ValueError("inner")
    looping.__context__.__context__ = looping
    assert classify(looping) == JudgeFailure("judge-error", "RuntimeError: loop", False)


# --- answered.py and identity.py -----------------------------------------------------------------


def test_who_answered_reads_as_the_model_and_its_fingerprint() -> None:
    assert Answered("gpt-4o-mini-2024-07-18", "fp_1").label() == "gpt-4o-mini-2024-07-18 (fingerprint fp_1)"
    assert Answered("gpt-4o-mini-2024-07-18").label() == "gpt-4o-mini-2024-07-18"
    assert Answered("m", "").label() == "m"


def test_who_answered_round_trips_through_json() -> None:
    for answered in (Answered("m", "fp_1"), Answered("m")):
        assert Answered.from_json(answered.to_json()) == answered
    assert Answered("m", "fp_1").to_json() == {"model": "m", "fingerprint": "fp_1"}
    assert Answered("m").to_json() == {"model": "m", "fingerprint": None}
    assert Answered.from_json({"model": "m"}) == Answered("m", None)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (["m"], "who answered is a JSON object"),
        ({}, "'model' of who answered must be a name"),
        ({"model": ""}, "'model' of who answered must be a name"),
        ({"model": 3}, "'model' of who answered must be a name"),
        ({"model": "m", "fingerprint": 1}, "'fingerprint' of who answered must be a string or null"),
    ],
)
def test_who_answered_refuses_anything_but_its_own_json(data: Any, message: str) -> None:
    with pytest.raises(TypeError) as raised:
        Answered.from_json(data)
    assert str(raised.value) == message


def _response(model: str | None, details: dict[str, Any] | None = None) -> ModelResponse:
    return ModelResponse(parts=[TextPart("ok")], model_name=model, provider_details=details)


def test_the_last_response_naming_its_model_is_who_answered() -> None:
    request = ModelRequest(parts=[UserPromptPart("judge")])
    messages: list[ModelMessage] = [
        request,
        _response("first", {"system_fingerprint": "fp_1"}),
        request,
        _response("second", {"system_fingerprint": "fp_2"}),
        request,
        _response(None),
    ]
    assert answered_by(messages) == Answered("second", "fp_2")
    assert answered_by([request, _response("m", {"system_fingerprint": 7})]) == Answered("m", None)
    assert answered_by([request, _response("m")]) == Answered("m", None)
    assert answered_by([request, _response(None)]) is None
    assert answered_by([]) is None


def test_only_the_openai_chat_model_as_built_gets_the_fingerprint() -> None:
    from pydantic_ai.models.openai import OpenAIChatModel

    other = FunctionModel(lambda messages, info: _response("x"), model_name="f")
    assert with_fingerprint(other) is other and type(other) is FunctionModel

    own_class = type("OpenAIChatModel", (OpenAIChatModel,), {})  # a subclass, even of the same name
    own = own_class("m", provider=_openai_provider())
    assert type(with_fingerprint(own)) is own_class
    chat = OpenAIChatModel("m", provider=_openai_provider())
    first = type(with_fingerprint(chat))
    again = OpenAIChatModel("n", provider=_openai_provider())
    assert first.__name__ == "FingerprintedChatModel" and first.__bases__ == (OpenAIChatModel,)
    assert type(with_fingerprint(again)) is first  # one subclass, made once
    assert type(with_fingerprint(chat)) is first  # twice is once


def _openai_provider() -> Any:
    from pydantic_ai.providers.openai import OpenAIProvider

    return OpenAIProvider(base_url="http://127.0.0.1:9/v1", api_key="k")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the loopback fake only
    with serve(model="fake-judge-2024-07-18", system_fingerprint="fp_a") as server:
        yield server


def _ask(model: Any) -> ModelResponse:
    params = ModelRequestParameters(output_mode="text", allow_text_output=True)
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("judge this")])]
    return asyncio.run(model.request(messages, None, params))


def test_a_compatible_model_sends_a_placeholder_key_and_reports_who_answered(fake: FakeOpenAI) -> None:
    response = _ask(openai_compatible_model(f"{fake.url}/v1", "fake-judge"))
    assert answered_by([response]) == Answered("fake-judge-2024-07-18", "fp_a")
    assert response.provider_details == {"system_fingerprint": "fp_a", "finish_reason": "stop"}
    fake.system_fingerprint = None
    response = _ask(openai_compatible_model(f"{fake.url}/v1", "fake-judge", api_key="sk-given-key-1"))
    assert response.provider_details == {"finish_reason": "stop"}
    assert [(r.path, r.auth, r.body["model"]) for r in fake.completions] == [
        ("/v1/chat/completions", "Bearer no-key-needed", "fake-judge"),
        ("/v1/chat/completions", "Bearer sk-given-key-1", "fake-judge"),
    ]


def test_a_compatible_model_makes_one_request_per_attempt(fake: FakeOpenAI) -> None:
    fake.status = 503
    fake.error = {"message": "overloaded"}
    model = openai_compatible_model(f"{fake.url}/v1", "fake-judge")
    with pytest.raises(ModelHTTPError) as raised:
        _ask(model)
    assert classify(raised.value) == JudgeFailure(
        "http-503", f"HTTP 503 from {fake.url}/v1/chat/completions: overloaded", True
    )
    assert len(fake.completions) == 1  # the SDK's client does not retry: the run's retries do


# --- models.py -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "base_url", "label"),
    [
        ("local", None, "local:gemma-3-270m-q4_k_m"),
        ("local:", None, "local:gemma-3-270m-q4_k_m"),
        ("local:http://127.0.0.1:8080", None, "local:http://127.0.0.1:8080/v1"),
        ("local:http://user:pw@127.0.0.1:8080/v1/#gemma", None, "local:http://127.0.0.1:8080/v1#gemma"),
        ("local:http://127.0.0.1:8080#gemma", "http://ignored:1", "local:http://127.0.0.1:8080/v1#gemma"),
        ("openai:gpt-4o", None, "openai:gpt-4o"),
        ("anthropic:claude", None, "anthropic:claude"),
        ("openai:gpt-4o", "", "openai:gpt-4o"),
        (f"openai:{SECRET}", None, "openai:[redacted]"),
        ("openai:llama3", "http://h:8000/v1/", "openai:llama3@http://h:8000/v1"),
        ("llama3", " http://u:pw@h:8000 ", "openai:llama3@http://h:8000"),
        ("ollama:llama3:8b", "http://h:8000/v1", "openai:ollama:llama3:8b@http://h:8000/v1"),
        # a fine-tuned model's name has colons of its own
        ("openai:ft:gpt-4o:acme:x1", "http://h:8000/v1", "openai:ft:gpt-4o:acme:x1@http://h:8000/v1"),
        ("openai:m", "http://h:8000/v1?api-key=abcdefgh", "openai:m@http://h:8000/v1?api-key=[redacted]"),
    ],
)
def test_a_judge_is_labelled_the_same_whether_called_or_replayed(
    value: str, base_url: str | None, label: str
) -> None:
    assert judge_label(value, base_url) == label


def test_a_local_model_file_is_labelled_by_its_stem_and_digest(tmp_path: Path) -> None:
    model = tmp_path / "tiny.Q4.gguf"
    model.write_bytes(b"abc")
    assert judge_label(f"local:{model}") == "local:tiny.Q4#7b0393befdc2"
    assert judge_label(f"local:{tmp_path / 'gone.gguf'}") == "local:gone#missing"


@pytest.mark.parametrize(
    ("value", "base_url", "message"),
    [
        (
            "local:ftp://x",
            None,
            "local:ftp://x: expected an http(s)://host:port URL of an OpenAI-compatible server",
        ),
        ("local:http://h:99999", None, "local:http://h:99999: the port is not a number in 0-65535"),
        ("m", "ftp://u:pw@h", "base URL 'ftp://h' is not an http(s)://host:port URL"),
        ("m", "not a url", "base URL 'not a url' is not an http(s)://host:port URL"),
    ],
)
def test_an_unusable_judge_url_is_a_config_error_without_credentials(
    value: str, base_url: str | None, message: str
) -> None:
    with pytest.raises(ModelConfigError) as raised:
        judge_label(value, base_url)
    assert str(raised.value) == message


def test_a_model_file_digest_reads_its_size_and_first_and_last_mib(tmp_path: Path) -> None:
    mib = 1 << 20
    small, exact, odd = tmp_path / "small", tmp_path / "exact", tmp_path / "odd"
    small.write_bytes(b"abc")
    exact.write_bytes(bytes(range(256)) * 4096)
    odd.write_bytes(bytes(range(256)) * (6 * 1024))  # 1.5 MiB: the last MiB overlaps the first
    assert (model_file_digest(small), model_file_digest(exact), model_file_digest(odd)) == (
        "7b0393befdc2",
        "1fbb135b6069",
        "3eb83082de26",
    )
    big = tmp_path / "big"
    data = bytearray(3 * mib)
    big.write_bytes(data)
    digest = model_file_digest(big)
    data[mib + 5] = 1  # the middle MiB is not read
    big.write_bytes(data)
    assert model_file_digest(big) == digest
    data[-1] = 1
    big.write_bytes(data)
    last = model_file_digest(big)
    data[0] = 1
    big.write_bytes(data)
    assert len({digest, last, model_file_digest(big)}) == 3
    big.write_bytes(bytes(3 * mib + 1))  # the size counts
    assert model_file_digest(big) not in {digest, last}
    assert model_file_digest(tmp_path) == "missing"


@pytest.mark.parametrize(
    ("base_url", "allowed", "sent"),
    [
        ("http://localhost:8080/v1", (), True),
        ("http://127.0.0.1:8080", (), True),
        ("http://[::1]:8080", (), True),
        (" http://127.0.0.1:8080 ", (), True),
        ("http://h:8000", ("", "http://h:8000/v1/"), True),
        ("http://h:8000/v1", ("http://h:8001/v1",), False),
        ("http://other:8000/v1", ("http://h:8000/v1",), False),
        ("http://h:8000/v1", (), False),
        ("ftp://h:8000", ("ftp://h:8000",), False),
    ],
)
def test_the_key_goes_only_to_the_runs_own_servers_or_this_machine(
    base_url: str, allowed: tuple[str, ...], sent: bool
) -> None:
    assert key_allowed(base_url, allowed) is sent


def test_a_model_object_is_used_as_given_and_labelled_by_system_and_name() -> None:
    from pydantic_ai.models.test import TestModel

    model = FunctionModel(lambda messages, info: _response("x"), model_name="custom")
    assert build_model(model) is model
    assert model_label(model) == "function:custom"
    other = TestModel(model_name="tester")
    assert build_model(other) is other
    assert model_label(other) == "test:tester"


def test_a_served_model_gets_the_run_key_only_when_it_may(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_llmjudge.models.response_cap import CappedTransport

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-key-1")
    monkeypatch.delenv("LLMJUDGE_API_KEY", raising=False)
    model: Any = build_model("openai:llama3", "http://127.0.0.1:9/v1", max_response_bytes=4321)
    assert (model.model_name, model.client.api_key, str(model.client.base_url)) == (
        "llama3",
        "sk-openai-key-1",
        "http://127.0.0.1:9/v1/",
    )
    transport = model.client._client._transport
    assert isinstance(transport, CappedTransport) and transport._limit == 4321
    monkeypatch.setenv("LLMJUDGE_API_KEY", "sk-llmjudge-key-2")
    assert build_model("llama3", "http://127.0.0.1:9/v1").client.api_key == "sk-llmjudge-key-2"  # type: ignore[attr-defined]
    assert build_model("llama3", "http://127.0.0.1:9/v1", send_key=False).client.api_key == "no-key-needed"  # type: ignore[attr-defined]
    fine_tuned: Any = build_model("openai:ft:gpt-4o:acme:x1", "http://127.0.0.1:9/v1")
    assert fine_tuned.model_name == "ft:gpt-4o:acme:x1"  # its own colons kept


def test_a_served_model_sends_from_the_judge_process_when_given_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_llmjudge.models.remote_model import ModelSpec

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LLMJUDGE_API_KEY", "sk-llmjudge-key-2")
    asked: list[tuple[ModelSpec, Any]] = []

    class Process:
        def model(self, spec: ModelSpec, profile: Any) -> str:
            asked.append((spec, profile))
            return "remote"

    for send_key, key in ((True, "sk-llmjudge-key-2"), (False, None)):
        built = build_model(
            "openai:llama3", "http://h:8000/v1", send_key=send_key, max_response_bytes=99, process=Process
        )
        assert built == "remote"
        assert asked[-1][0] == ModelSpec("http://h:8000/v1", "llama3", key, 99)
        assert _named(asked[-1][1]) == _named(compatible_profile())


def test_an_unbuildable_model_string_says_why_in_this_plugins_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError) as raised:
        build_model("openai:gpt-4o")
    assert str(raised.value) == (
        "cannot use judge model 'openai:gpt-4o': OPENAI_API_KEY is not set: set it in the environment, "
        "or judge offline with --llmjudge-model local (the bundled model), or rerun cached verdicts "
        "without calling any model with --llmjudge-cache=replay"
    )
    with pytest.raises(ModelConfigError) as raised:
        build_model("nope:x")
    assert str(raised.value) == "cannot use judge model 'nope:x': Unknown provider: nope"


def test_pydantic_ais_keyless_hint_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(value: str, provider_factory: Any = None) -> Any:
        raise UserError(
            f"Pass `api_key=...` ({SECRET}) to use it. "
            "To try Pydantic AI without an API key, use `Agent('test')`."
        )

    monkeypatch.setattr(judge_models.models, "infer_model", refuse)
    with pytest.raises(ModelConfigError) as raised:
        build_model("acme:m")
    assert str(raised.value) == "cannot use judge model 'acme:m': Pass `api_key=...` ([redacted]) to use it."


def test_a_model_string_is_built_with_the_cap_and_its_client_made_ready(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openai._base_client import get_platform

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    model: Any = build_model("openai-chat:gpt-4o", max_response_bytes=1234)
    assert (type(model).__name__, model.model_name, model.client._platform) == (
        "FingerprintedChatModel",
        "gpt-4o",
        get_platform(),
    )
    assert isinstance(model.prepare_request, openai_adapter._Prepared)
    assert model.client._client._transport._limit == 1234


def test_the_replay_stand_in_is_labelled_like_the_judge_and_never_calls() -> None:
    model = replay_only_model("openai:gpt-4o")
    assert (model.model_name, model_label(model)) == ("openai:gpt-4o", "function:openai:gpt-4o")
    with pytest.raises(JudgeFailure) as raised:
        _ask(model)
    assert raised.value == JudgeFailure("cache-miss", "replay mode never calls the judge model")


@pytest.mark.parametrize(
    ("temperature", "max_tokens", "timeout", "settings"),
    [
        (None, None, None, {"max_retries": 0}),
        (0.0, 0, 0.0, {"max_retries": 0, "temperature": 0.0, "max_tokens": 0, "timeout": 0.0}),
        (0.7, 256, 30.0, {"max_retries": 0, "temperature": 0.7, "max_tokens": 256, "timeout": 30.0}),
        (None, 256, None, {"max_retries": 0, "max_tokens": 256}),
    ],
)
def test_judge_settings_hold_what_was_set_and_no_sdk_retries(
    temperature: float | None, max_tokens: int | None, timeout: float | None, settings: dict[str, Any]
) -> None:
    assert model_settings(temperature, max_tokens, timeout) == settings


SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
        "code": {"type": "string", "maxLength": 5},
        "kind": {"type": "string", "const": "judge"},
        "score": {"type": "integer"},
        "notes": {"type": "array", "items": {"type": "string"}},
    },
}


def _capped(cap: int | None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "reason": {"type": "string"},
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
        "code": {"type": "string", "maxLength": 5},
        "kind": {"type": "string", "const": "judge"},
        "score": {"type": "integer"},
        "notes": {"type": "array", "items": {"type": "string"}},
    }
    if cap is not None:
        properties["reason"]["maxLength"] = cap
        properties["notes"]["items"]["maxLength"] = cap
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize("cap", [600, 40, 0, None])
def test_every_unbounded_string_of_the_schema_gets_the_length_cap(cap: int | None) -> None:
    profile: Any = compatible_profile(True, cap) if cap != 600 else compatible_profile()
    transformed = profile["json_schema_transformer"](copy.deepcopy(SCHEMA), strict=None).walk()
    assert transformed == _capped(cap)


def _named(profile: Any) -> dict[str, Any]:
    """A profile with its schema transformer (a class made per call) by name."""
    return {**profile, "json_schema_transformer": profile["json_schema_transformer"].__name__}


def test_the_served_profile_asks_for_native_json_or_prompted_output() -> None:
    assert _named(compatible_profile()) == {
        "supports_json_schema_output": True,
        "supports_json_object_output": True,
        "default_structured_output_mode": "native",
        "json_schema_transformer": "CappedStrings",
        "openai_supports_strict_tool_definition": False,
    }
    assert _named(compatible_profile(native_json=False, max_string_length=None)) == {
        "supports_json_schema_output": False,
        "supports_json_object_output": True,
        "default_structured_output_mode": "prompted",
        "json_schema_transformer": "InlineDefsJsonSchemaTransformer",
        "openai_supports_strict_tool_definition": False,
    }


def test_a_compatible_model_is_built_with_its_settings_no_retries_and_the_cap() -> None:
    from openai._base_client import get_platform

    model: Any = openai_compatible_model(
        "http://127.0.0.1:9/v1",
        "m",
        native_json=False,
        max_string_length=40,
        settings={"temperature": 0.5},
        max_response_bytes=77,
    )
    transformer = model.profile["json_schema_transformer"]
    assert transformer(copy.deepcopy(SCHEMA), strict=None).walk() == _capped(40)
    assert (model.model_name, model.settings, model.client.max_retries) == ("m", {"temperature": 0.5}, 0)
    assert (model.client.api_key, model.client._platform) == ("no-key-needed", get_platform())
    assert model.profile["default_structured_output_mode"] == "prompted"
    assert model.client._client._transport._limit == 77
    default: Any = openai_compatible_model("http://127.0.0.1:9/v1", "m")  # native JSON, strings capped
    expected = _named(compatible_profile())
    assert {key: _named(default.profile)[key] for key in expected} == expected
    assert default.profile["json_schema_transformer"](copy.deepcopy(SCHEMA), strict=None).walk() == _capped(
        600
    )
    assert isinstance(model.prepare_request, openai_adapter._Prepared)


# --- config.py -----------------------------------------------------------------------------------


def test_a_captured_request_is_resent_with_each_cases_prompt_and_fresh_ids() -> None:
    before = datetime.now(UTC)
    captured = ModelRequest(
        parts=[SystemPromptPart("be strict"), UserPromptPart("first case")], instructions="judge it"
    )
    template = RequestTemplate(captured, {"temperature": 0.0}, ModelRequestParameters(), accepts_text=True)
    [one] = template.messages("second case")
    [two] = template.messages("third case")
    assert isinstance(one, ModelRequest) and isinstance(two, ModelRequest)
    assert [(type(p).__name__, p.content) for p in one.parts] == [
        ("SystemPromptPart", "be strict"),
        ("UserPromptPart", "second case"),
    ]
    assert [p.content for p in two.parts] == ["be strict", "third case"]
    assert one.instructions == "judge it" and one.parts[0] is captured.parts[0]
    assert [p.content for p in captured.parts] == ["be strict", "first case"]  # the capture unchanged
    assert one.timestamp >= before
    uuid4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
    ids = [one.run_id, one.conversation_id, two.run_id, two.conversation_id]
    assert all(uuid4.match(i or "") for i in ids) and len(set(ids)) == 4


def test_judge_configs_are_equal_by_model_name_settings_and_price_only() -> None:
    model = FunctionModel(lambda messages, info: _response("x"), model_name="m")
    first = JudgeConfig(model, "m", {"temperature": 0.0})
    first.templates[("agent", "instructions")] = None
    assert first == JudgeConfig(model, "m", {"temperature": 0.0})
    assert first.price is None and first.templates != JudgeConfig(model, "m", {}).templates
    assert first != JudgeConfig(model, "m", {"temperature": 0.5})


# --- openai_adapter.py ---------------------------------------------------------------------------


class _Recording:
    """A model whose ``prepare_request`` hands back what it was given, counting its calls."""

    def __init__(self, client: Any = None) -> None:
        self.client = client
        self.calls = 0

    def prepare_request(self, settings: Any, params: Any) -> tuple[Any, Any]:
        self.calls += 1
        return (None if settings is None else dict(settings)), params


def _openai_client(max_retries: int) -> Any:
    from openai import AsyncOpenAI

    return AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=max_retries)


@pytest.mark.parametrize(
    ("settings", "prepared"),
    [
        ({"max_retries": 2, "temperature": 0.0}, {"temperature": 0.0}),
        ({"max_retries": 2}, None),
        ({"max_retries": 1, "temperature": 0.0}, {"max_retries": 1, "temperature": 0.0}),
        ({"temperature": 0.0}, {"temperature": 0.0}),
        ({}, {}),
        (None, None),
    ],
)
def test_only_the_retries_the_client_has_already_are_left_out(
    settings: dict[str, Any] | None, prepared: dict[str, Any] | None
) -> None:
    model = _Recording(_openai_client(2))
    openai_adapter.prepare_once(model)
    params = _Params()
    assert model.prepare_request(settings, params) == (prepared, params)


def test_a_model_without_an_openai_client_keeps_its_retries() -> None:
    model = _Recording(client=SimpleNamespace(max_retries=2))
    openai_adapter.prepare_once(model)
    assert model.prepare_request({"max_retries": 2}, None) == ({"max_retries": 2}, None)
    openai_adapter.settle_platform(model)
    assert not hasattr(model.client, "_platform")
    openai_adapter.prepare_once(SimpleNamespace())  # nothing to prepare: nothing happens


class _Params:
    pass


def test_at_most_sixteen_prepared_requests_are_kept() -> None:
    model = _Recording()
    openai_adapter.prepare_once(model)
    params = [_Params() for _ in range(17)]
    for p in params[:16]:
        model.prepare_request(None, p)
    model.prepare_request(None, params[15])
    assert model.calls == 16  # all sixteen kept
    model.prepare_request(None, params[16])  # the seventeenth: the kept ones are dropped
    model.prepare_request(None, params[16])
    assert model.calls == 17
    model.prepare_request(None, params[0])
    assert model.calls == 18


def test_settings_changed_in_place_are_prepared_again() -> None:
    model = _Recording()
    openai_adapter.prepare_once(model)
    settings, params = {"temperature": 0.0}, _Params()
    assert model.prepare_request(settings, params) == ({"temperature": 0.0}, params)
    settings["temperature"] = 0.5
    assert model.prepare_request(settings, params) == ({"temperature": 0.5}, params)
    assert model.calls == 2


def test_a_client_that_knows_its_platform_keeps_it() -> None:
    model = SimpleNamespace(client=_openai_client(0))
    model.client._platform = "Elsewhere"
    openai_adapter.settle_platform(model)
    assert model.client._platform == "Elsewhere"
    model.client._platform = None
    openai_adapter.settle_platform(model)
    assert model.client._platform == openai_adapter._platform() and model.client._platform is not None


# --- judges.py -----------------------------------------------------------------------------------


def _benchmark(location: str = "benchmarks/B1.yaml", **judge: Any) -> Any:
    from pytest_llmjudge.suite.files import JudgeSettings

    return SimpleNamespace(
        spec=SimpleNamespace(judge=JudgeSettings(**judge) if judge else None), location=location
    )


def test_a_benchmarks_own_judge_settings_win_over_the_runs() -> None:
    from pytest_llmjudge.models.judges import JudgeChoice
    from pytest_llmjudge.suite.settings import RunSettings

    run = RunSettings(
        model="openai:run",
        base_url="http://run:1",
        temperature=0.3,
        max_tokens=10,
        timeout=5.0,
        batch="submit",
    )
    assert JudgeChoice.of(_benchmark(), run) == JudgeChoice(
        "openai:run", "http://run:1", 0.3, 10, 5.0, "submit"
    )
    own = _benchmark(model="openai:own", base_url="http://own:2", temperature=0.0, max_tokens=20, timeout=9.0)
    assert JudgeChoice.of(own, run) == JudgeChoice("openai:own", "http://own:2", 0.0, 20, 9.0, "submit")
    unset = _benchmark(model="", base_url="", temperature=None)
    assert JudgeChoice.of(unset, run) == JudgeChoice("openai:run", "http://run:1", 0.3, 10, 5.0, "submit")


@pytest.mark.parametrize(
    ("own", "run", "mode"),
    [
        (None, "off", "off"),
        (None, "submit", "submit"),
        (True, "off", "on"),
        (True, "collect", "collect"),
        (False, "on", "off"),
    ],
)
def test_a_benchmarks_judge_batch_setting_over_the_runs(own: bool | None, run: str, mode: str) -> None:
    from pytest_llmjudge.models.judges import JudgeChoice
    from pytest_llmjudge.suite.settings import RunSettings

    benchmark = _benchmark(batch=own) if own is not None else _benchmark()
    assert JudgeChoice.of(benchmark, RunSettings(batch=run)).batch == mode


@pytest.mark.parametrize(
    ("cores", "concurrency", "slots"),
    [(1, 16, 1), (2, 16, 1), (3, 16, 2), (16, 16, 2), (16, 1, 1), (16, 0, 1)],
)
def test_the_local_judge_gets_one_slot_on_two_cores_and_two_above(
    cores: int, concurrency: int, slots: int
) -> None:
    from pytest_llmjudge.models.judges import local_slots

    assert local_slots(cores, concurrency) == slots


def test_a_models_server_is_its_provider_and_base_url() -> None:
    from pytest_llmjudge.models.judges import base_url_of, endpoint

    served = openai_compatible_model("http://127.0.0.1:9/v1", "m")
    assert (endpoint(served), base_url_of(served)) == (
        "openai@http://127.0.0.1:9/v1/",
        "http://127.0.0.1:9/v1/",
    )
    assert (endpoint(object()), base_url_of(object())) == ("@", None)
    assert base_url_of(SimpleNamespace(base_url=3)) is None

    class NoClient:
        @property
        def base_url(self) -> str:
            raise RuntimeError("no client")

    assert base_url_of(NoClient()) is None


def test_a_benchmarks_own_server_gets_the_key_only_if_the_run_allows_it() -> None:
    from pytest_llmjudge.models.judges import may_send_key

    warned: set[str] = set()
    assert may_send_key(_benchmark(), None, warned) is True
    assert may_send_key(_benchmark(model="m"), None, warned) is True
    assert may_send_key(_benchmark(base_url="http://run:1/v1"), "http://run:1", warned) is True
    assert may_send_key(_benchmark(base_url="http://127.0.0.1:8080"), None, warned) is True
    other = _benchmark(base_url="http://user:pw@other:1/v1")
    with pytest.warns(UserWarning) as caught:
        assert may_send_key(other, "http://run:1", warned) is False
        assert may_send_key(other, "http://run:1", warned) is False  # said once
    assert [str(w.message) for w in caught] == [
        "benchmarks/B1.yaml: judge.base_url: http://other:1/v1 is neither the run's base URL "
        "(--llmjudge-base-url) nor this machine; the API key is not sent there"
    ]
    assert warned == {"http://user:pw@other:1/v1"}


def _judges(tmp_path: Path, hook: Any = None, **settings: Any) -> Any:
    from pytest_llmjudge.models.judges import Judges
    from pytest_llmjudge.suite.settings import RunSettings

    return Judges(RunSettings(**settings), tmp_path, lambda: hook)


def test_a_judge_from_the_model_hook_is_configured_once_per_choice(tmp_path: Path) -> None:
    hook = FunctionModel(lambda messages, info: _response("x"), model_name="hooked")
    judges = _judges(tmp_path, hook, temperature=0.2, timeout=30.0)
    config = judges.config(_benchmark())
    assert (config.model, config.model_name, config.settings, config.price) == (
        hook,
        "function:hooked",
        {"max_retries": 0, "temperature": 0.2, "timeout": 30.0},
        None,
    )
    assert judges.config(_benchmark()) is config
    assert judges.config(_benchmark(max_tokens=5)).settings == {
        "max_retries": 0,
        "temperature": 0.2,
        "max_tokens": 5,
        "timeout": 30.0,
    }
    assert judges.with_server(config) is config
    assert judges.planned(_benchmark()) == ("function:hooked", None, config.settings)


def test_no_judge_model_is_an_error_but_in_replay(tmp_path: Path) -> None:
    with pytest.raises(LookupError, match=r"^no judge model$"):
        _judges(tmp_path).config(_benchmark())
    with pytest.raises(LookupError, match=r"^no judge model$"):
        _judges(tmp_path, cache="replay").planned(_benchmark())
    config = _judges(tmp_path, cache="replay").config(_benchmark())
    assert config.model_name == ""
    with pytest.raises(JudgeFailure):
        _ask(config.model)


def test_a_replayed_or_local_judge_calls_nothing_until_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    replayed = _judges(tmp_path, model="openai:gpt-4o", cache="replay").config(_benchmark())
    assert (replayed.model_name, replayed.model.model_name) == ("openai:gpt-4o", "openai:gpt-4o")
    with pytest.raises(JudgeFailure, match="cache-miss"):
        _ask(replayed.model)
    judges = _judges(tmp_path, model="local")
    local = judges.config(_benchmark())
    assert (local.model_name, local.price.source if local.price else None) == (
        "local:gemma-3-270m-q4_k_m",
        "local (free)",
    )
    assert list(judges._deferred_local.values()) == [(local.model, "local", None)]


def test_a_judge_at_a_base_url_is_sent_from_the_judge_process_unless_off_or_batched(tmp_path: Path) -> None:
    judges = _judges(tmp_path)
    assert judges._process_for("off") == judges.judge_process
    assert judges._process_for("on") is None
    assert _judges(tmp_path, judge_process="off")._process_for("off") is None
    served = _judges(tmp_path, model="llama3", base_url="http://127.0.0.1:9/v1", judge_process="off")
    config = served.config(_benchmark())
    assert (config.model_name, type(config.model).__name__) == (
        "openai:llama3@http://127.0.0.1:9/v1",
        "FingerprintedChatModel",
    )


def test_the_planned_judge_is_priced_by_the_price_option(tmp_path: Path) -> None:
    judges = _judges(tmp_path, model="openai:gpt-4o", price=("openai:gpt-4o=1.5/6",), max_tokens=9)
    label, price, settings = judges.planned(_benchmark())
    assert (label, settings) == (
        "openai:gpt-4o",
        {"max_retries": 0, "temperature": 0.0, "max_tokens": 9, "timeout": 60.0},
    )
    assert price is not None and (price.input_mtok, price.output_mtok, price.source) == (
        Decimal("1.5"),
        Decimal("6"),
        "--llmjudge-price",
    )


class _NoBatchModel(FunctionModel):
    """A model of a provider without a batch API."""

    @property
    def batch_max_requests(self) -> int | None:
        return None


def test_a_batched_judge_of_a_provider_without_a_batch_api_is_a_config_error(tmp_path: Path) -> None:
    hook = _NoBatchModel(lambda messages, info: _response("x"), model_name="hooked")
    with pytest.raises(ModelConfigError) as raised:
        _judges(tmp_path, hook, batch="on").config(_benchmark())
    assert str(raised.value) == (
        "function:hooked has no batch API; --llmjudge-batch needs a judge of a provider that has one: "
        "openai: (the Responses API), anthropic:, google-gla:"
    )
    assert _judges(tmp_path, hook, batch="on", cache="replay").config(_benchmark()).model is hook


def test_a_batched_judge_waits_for_its_batch_past_its_own_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from pytest_llmjudge.models.batching import BatchJudgeModel
    from pytest_llmjudge.models.pending_batches import PendingStore

    monkeypatch.setenv("LLMJUDGE_BATCH_POLL", "7")
    hook = FunctionModel(lambda messages, info: _response("x"), model_name="hooked")
    judges = _judges(tmp_path, hook, batch="collect", batch_wait=100.0, timeout=30.0)
    config = judges.config(_benchmark())
    model = config.model
    assert isinstance(model, BatchJudgeModel)
    assert (model.judge, model.mode, model.store, model.wait) == (
        "function:hooked",
        "collect",
        PendingStore(tmp_path / ".llmjudge" / "batches"),
        100.0,
    )
    pool = model.wrapped.pool  # type: ignore[attr-defined]  # pydantic-ai's batch pool
    assert (pool.max_wait, pool.poll_interval, pool.max_poll_interval) == (
        timedelta(seconds=1),
        timedelta(seconds=7),
        timedelta(minutes=10),
    )
    assert config.settings == {"max_retries": 0, "temperature": 0.0, "timeout": 160.0}
    assert judges.planned(_benchmark()) == ("function:hooked", None, config.settings)


# --- batching.py and pending_batches.py ----------------------------------------------------------


def test_a_batched_request_carries_no_timeout_or_sdk_retries() -> None:
    from pytest_llmjudge.models.batching import batch_settings

    settings: Any = {"timeout": 5.0, "max_retries": 0, "temperature": 0.0, "max_tokens": 9}
    assert batch_settings(settings) == {"temperature": 0.0, "max_tokens": 9}
    assert settings == {"timeout": 5.0, "max_retries": 0, "temperature": 0.0, "max_tokens": 9}
    assert batch_settings({}) == {}


@pytest.mark.parametrize(
    ("details", "shown"),
    [
        ({"batch": {"batch": {"id": "batch_1"}}}, "batch_1"),
        ({"batch": {"batch": {}}}, "?"),
        ({"batch": {}}, "?"),
        ({}, "?"),
        (None, "?"),
    ],
)
def test_a_suspended_response_names_its_batch(details: dict[str, Any] | None, shown: str) -> None:
    from pytest_llmjudge.models.batching import batch_id

    assert batch_id(_response("m", details)) == shown


@pytest.mark.parametrize(("timeout", "call_timeout"), [(None, 160.0), (30.0, 160.0), (90.0, 190.0)])
def test_a_batched_call_may_run_its_last_check_past_the_batch_wait(
    tmp_path: Path, timeout: float | None, call_timeout: float
) -> None:
    from pytest_llmjudge.models.batching import BatchJudgeModel, batch_judge
    from pytest_llmjudge.models.pending_batches import PendingStore

    store = PendingStore(tmp_path)
    model = FunctionModel(lambda messages, info: _response("x"), model_name="f")
    settings: Any = {"temperature": 0.0} if timeout is None else {"temperature": 0.0, "timeout": timeout}
    batched, kept = batch_judge(
        model, "openai:j", settings, mode="on", store=store, wait=100.0, poll_interval=1.0
    )
    assert kept == {"temperature": 0.0, "timeout": call_timeout}
    assert isinstance(batched, BatchJudgeModel)
    assert (batched.judge, batched.mode, batched.store, batched.wait, batched.deadline) == (
        "openai:j",
        "on",
        store,
        100.0,
        None,
    )


def test_a_local_judge_or_a_provider_without_a_batch_api_cannot_batch(tmp_path: Path) -> None:
    from pytest_llmjudge.models.batching import BatchUnsupportedError, batch_capable, batch_judge
    from pytest_llmjudge.models.pending_batches import PendingStore

    model = FunctionModel(lambda messages, info: _response("x"), model_name="f")
    with pytest.raises(BatchUnsupportedError) as raised:
        batch_judge(
            model, "local:gemma", {}, mode="on", store=PendingStore(tmp_path), wait=1.0, poll_interval=1.0
        )
    assert str(raised.value) == (
        "local:gemma (a local judge) has no batch API; --llmjudge-batch needs a judge of a provider "
        "that has one: openai: (the Responses API), anthropic:, google-gla:"
    )
    with pytest.raises(BatchUnsupportedError) as raised:
        batch_capable(_NoBatchModel(lambda messages, info: _response("x"), model_name="nb"))
    assert str(raised.value) == (
        "function:nb has no batch API; --llmjudge-batch needs a judge of a provider that has one: "
        "openai: (the Responses API), anthropic:, google-gla:"
    )
    assert batch_capable(model) is model


def test_a_served_chat_model_batches_through_its_responses_model() -> None:
    from pytest_llmjudge.models.batching import batch_capable

    chat: Any = openai_compatible_model("http://127.0.0.1:9/v1", "m")
    capable: Any = batch_capable(chat)
    assert (type(capable).__name__, capable.model_name, capable.client) == (
        "OpenAIResponsesModel",
        "m",
        chat.client,
    )
    assert capable.batch_max_requests is not None


def test_a_pending_failure_passes_through_code_that_sets_its_traceback() -> None:
    from pytest_llmjudge.models.batching import PendingFailure

    failure = PendingFailure("batch-pending", "submitted in batch b1")
    failure.__traceback__ = None
    with pytest.raises(AttributeError):
        failure.kind = "other"  # type: ignore[misc]
    assert (str(failure), failure.transient) == ("batch-pending: submitted in batch b1", False)


def test_waiting_requests_are_kept_per_request_and_judge_until_answered(tmp_path: Path) -> None:
    from pytest_llmjudge.models.pending_batches import PendingRecord, PendingStore

    store = PendingStore(tmp_path / "batches")
    key = store.key("digest-1", "openai:j")
    assert key == store.key("digest-1", "openai:j")
    assert len({key, store.key("digest-2", "openai:j"), store.key("digest-1", "openai:k")}) == 3
    assert store.waiting(key) == [] and list(store.records()) == []
    first, second = PendingRecord("b1", "r1", {"parts": []}), PendingRecord("b1", "r2", {"n": 2})
    store.put(key, first)
    store.put(key, second)
    other = store.key("digest-2", "openai:j")
    store.put(other, PendingRecord("b2", "r3", None))
    assert store.waiting(key) == [first, second]
    assert sorted(r.response_id for r in store.records()) == ["r1", "r2", "r3"]
    assert sorted(p.name for p in (tmp_path / "batches").iterdir()) == sorted(
        [f"{key}.json", f"{other}.json"]
    )
    store.remove(key, "r1")
    assert store.waiting(key) == [second]
    store.remove(key, "r2")
    assert not (tmp_path / "batches" / f"{key}.json").exists()
    store.remove(key, "r2")  # nothing left: nothing to do


@pytest.mark.parametrize("text", ["not json", "{}", '[{"batch": "b1"}]', "[1]"])
def test_an_unreadable_pending_file_holds_nothing(tmp_path: Path, text: str) -> None:
    from pytest_llmjudge.models.pending_batches import PendingStore

    store = PendingStore(tmp_path)
    (tmp_path / "k.json").write_text(text)
    assert store.waiting("k") == [] and list(store.records()) == []


def test_what_waits_is_counted_in_requests_and_batches(tmp_path: Path) -> None:
    from pytest_llmjudge.models.pending_batches import PendingRecord, PendingStore, pending_reason

    store = PendingStore(tmp_path / "batches")
    assert pending_reason(store) is None
    store.put("k1", PendingRecord("b1", "r1", None))
    hint = "collect with pytest --llmjudge-batch=collect (the same suite and judge)"
    assert pending_reason(store) == f"pending: 1 request in 1 batch; {hint}"
    store.put("k1", PendingRecord("b1", "r2", None))
    store.put("k2", PendingRecord("b2", "r3", None))
    assert pending_reason(store) == f"pending: 3 requests in 2 batches; {hint}"


# -- response_cap.CappedTransport ------------------------------------------------------------------


def through_cap(
    headers: list[tuple[str, str]], body: bytes, limit: int = 10_000
) -> tuple[httpx.Response, bytes]:
    """A GET through the capped transport to a server answering ``headers`` and ``body``: the
    response as the SDK gets it, its body read whole; the request as the server got it is kept."""
    from pytest_llmjudge.models.response_cap import CappedTransport

    def answer(request: httpx.Request) -> httpx.Response:
        SENT.append(request)
        stream = httpx.ByteStream(body)  # streamed, as a server sends it
        return httpx.Response(200, headers=headers, stream=stream, extensions={"http_version": b"HTTP/1.1"})

    async def get() -> tuple[httpx.Response, bytes]:
        transport = CappedTransport(httpx.MockTransport(answer), limit)
        # a client that would accept brotli and zstd too (httpx does when their packages are there)
        async with httpx.AsyncClient(
            transport=transport, headers={"Accept-Encoding": "gzip, br, zstd"}
        ) as client:
            response = await client.get("http://judge.test/v1/chat/completions")
            return response, await response.aread()

    return asyncio.run(get())


SENT: list[httpx.Request] = []


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("GZIP ", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("identity, gzip", gzip.compress),
        ("deflate", lambda data: zlib.compress(data, wbits=-zlib.MAX_WBITS)),  # raw deflate, no header
    ],
)
def test_a_compressed_answer_is_decoded_and_its_encoding_headers_dropped(encoding: str, encode: Any) -> None:
    body = b'{"answer": "' + b"x" * 500 + b'"}'
    response, read = through_cap([("Content-Encoding", encoding), ("X-Other", "kept")], encode(body))
    assert read == body
    assert "content-encoding" not in response.headers and "content-length" not in response.headers
    assert response.headers["x-other"] == "kept"
    assert SENT[-1].headers["accept-encoding"] == "gzip, deflate"  # only what the cap can decode
    assert response.extensions == {"http_version": b"HTTP/1.1"}


def test_an_identity_answer_keeps_its_length() -> None:
    response, read = through_cap([("Content-Encoding", "identity"), ("Content-Length", "5")], b"plain")
    assert read == b"plain" and response.headers["content-length"] == "5"
    assert response.headers["content-encoding"] == "identity"


@pytest.mark.parametrize(("encoding", "named"), [("br", "br"), ("BR", "br"), ("compress, gzip", "compress")])
def test_an_answer_in_an_encoding_the_cap_cannot_read_is_refused(encoding: str, named: str) -> None:
    with pytest.raises(UnreadableResponse) as raised:
        through_cap([("Content-Encoding", encoding)], gzip.compress(b"{}"))
    assert raised.value.failure == JudgeFailure(
        "invalid-response", f"the judge's response has content encoding {named!r}"
    )


def test_pending_requests_are_kept_below_a_folder_made_on_first_write(tmp_path: Path) -> None:
    from pytest_llmjudge.models.pending_batches import PendingRecord, PendingStore

    store = PendingStore(tmp_path / ".llmjudge" / "batches")  # neither folder exists yet
    assert list(store.records()) == []
    # the key names a stored file: an earlier run's pending requests are found by it
    key = store.key("abc123", "openai:gpt-4o")
    assert key == "6c15e0f00e84b4b7b3e8ffad5d31d9a0b71b5b5efe71a3c4e526a7089bef5583"
    assert store.key("abc123", "openai:gpt-4o-mini") != key != store.key("abc124", "openai:gpt-4o")
    record = PendingRecord("batch_1", "resp_1", {"parts": [{"content": "héllo"}]})
    store.put(key, record)
    assert [p.name for p in store.folder.iterdir()] == [f"{key}.json"]  # no temporary file left
    assert store.waiting(key) == [record] and list(store.records()) == [record]
    store.remove(key, "resp_1")
    assert store.waiting(key) == []


def test_an_answer_exactly_at_the_cap_is_read_and_one_byte_more_is_not() -> None:
    body = b"x" * 100
    assert through_cap([], body, limit=100)[1] == body
    assert through_cap([("Content-Encoding", "gzip")], gzip.compress(body), limit=100)[1] == body
    for headers, sent in (([], body + b"y"), ([("Content-Encoding", "gzip")], gzip.compress(body + b"y"))):
        with pytest.raises(UnreadableResponse) as raised:
            through_cap(headers, sent, limit=100)
        assert raised.value.failure == JudgeFailure(
            "response-too-large",
            "the judge's response is larger than the 100-byte cap (--llmjudge-max-response-bytes); "
            "the rest was not read",
        )


def test_a_compressed_answer_that_does_not_decode_says_so() -> None:
    with pytest.raises(httpx.DecodingError) as raised:
        through_cap([("Content-Encoding", "gzip")], b"\x1f\x8b not gzip at all")
    assert str(raised.value).startswith("cannot decode the gzip response: ")
    # deflate: tried with its zlib header, then raw, and then it is an error (not tried again)
    with pytest.raises(httpx.DecodingError) as raised:
        through_cap([("Content-Encoding", "deflate")], b"\xff\xff\xff\xff")
    assert (
        str(raised.value)
        == "cannot decode the deflate response: Error -3 while decompressing data: invalid block type"
    )
