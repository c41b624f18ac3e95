"""The judge process's two ends, in this process: the run's side (``JudgeProcess`` and its
``RemoteModel``) against a real judge process, and the judge process's side (``Worker``) driven
message by message, both against the fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import io
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, serve
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters

from pytest_llmjudge.models import judge_process
from pytest_llmjudge.models.classify import classify
from pytest_llmjudge.models.failure import CarriedFailure
from pytest_llmjudge.models.judge_process import JudgeProcess, JudgeProcesses, read_frame, write_frame
from pytest_llmjudge.models.judge_worker import Worker
from pytest_llmjudge.models.models import build_model, compatible_profile
from pytest_llmjudge.models.remote_model import ModelSpec, RemoteModel
from pytest_llmjudge.models.server_time import note_response, note_seconds, timed_call

ANSWER_WITHIN = 10.0  # seconds: the fake server answers at once, the judge process in well under that
PARAMS = ModelRequestParameters(output_mode="text", allow_text_output=True)
MESSAGES: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("judge this")])]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    with serve(model="fake-judge-2024-07-18", system_fingerprint="fp_a") as server:
        yield server


@pytest.fixture(scope="module")
def process() -> Iterator[JudgeProcess]:
    started = JudgeProcess()
    yield started
    started.close()


def remote(
    process: JudgeProcess | JudgeProcesses, fake: FakeOpenAI, key: str | None = "sk-test"
) -> RemoteModel:
    return process.model(ModelSpec(f"{fake.url}/v1", "fake-judge", key, 100_000), compatible_profile())


def ask(model: RemoteModel, settings: Any = None, params: ModelRequestParameters = PARAMS) -> ModelResponse:
    async def go() -> ModelResponse:  # an answer never delivered fails here, not hangs
        return await asyncio.wait_for(model.request(MESSAGES, settings, params), ANSWER_WITHIN)

    return asyncio.run(go())


def test_a_request_is_answered_by_the_judge_process_as_the_server_answered(
    process: JudgeProcess, fake: FakeOpenAI
) -> None:
    fake.headers = {"openai-processing-ms": "120"}
    model = remote(process, fake)
    assert (model.model_name, model.system, model.base_url) == ("fake-judge", "openai", f"{fake.url}/v1/")

    async def go() -> tuple[ModelResponse, float | None]:
        with timed_call() as server:
            response = await asyncio.wait_for(
                model.request(MESSAGES, {"temperature": 0.25}, PARAMS), ANSWER_WITHIN
            )
        return response, server.known

    response, server_seconds = asyncio.run(go())
    assert response.parts == [TextPart('{"reason": "fine", "pass": true}')]
    assert response.model_name == "fake-judge-2024-07-18"
    assert response.provider_details == {"system_fingerprint": "fp_a", "finish_reason": "stop"}
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 2)
    assert server_seconds == pytest.approx(0.12)
    (sent,) = fake.completions
    assert sent.auth == "Bearer sk-test"
    assert sent.body["model"] == "fake-judge"
    assert sent.body["temperature"] == 0.25
    assert sent.body["messages"] == [{"role": "user", "content": "judge this"}]
    fake.headers = {}  # a server that does not say its time: the call's server time is unknown
    assert asyncio.run(go())[1] is None


def test_concurrent_requests_each_get_their_own_answer(process: JudgeProcess, fake: FakeOpenAI) -> None:
    model = remote(process, fake)
    fake.delay = 0.2
    fake.answer = lambda body: {"reason": f"t={body['temperature']}", "pass": True}

    async def go() -> list[ModelResponse]:
        calls = [model.request(MESSAGES, {"temperature": t / 10}, PARAMS) for t in range(6)]
        return await asyncio.wait_for(asyncio.gather(*calls), ANSWER_WITHIN)

    answers = asyncio.run(go())
    assert [a.parts[0].content for a in answers] == [  # type: ignore[union-attr]
        f'{{"reason": "t={t / 10}", "pass": true}}' for t in range(6)
    ]
    assert fake.peak > 1  # they were in flight together


def test_the_judge_on_this_side_has_the_profile_of_the_served_model(
    process: JudgeProcess, fake: FakeOpenAI
) -> None:
    profile = remote(process, fake).profile
    assert profile["supports_json_schema_output"] and profile["default_structured_output_mode"] == "native"


def test_without_a_key_the_judge_process_sends_a_placeholder(process: JudgeProcess, fake: FakeOpenAI) -> None:
    ask(remote(process, fake, key=None))
    assert [r.auth for r in fake.completions] == ["Bearer no-key-needed"]


def test_settings_changed_after_they_were_sent_are_sent_again(
    process: JudgeProcess, fake: FakeOpenAI
) -> None:
    model = remote(process, fake)
    settings: dict[str, Any] = {"temperature": 0.1}
    ask(model, settings)
    ask(model, settings)
    settings["temperature"] = 0.7
    ask(model, settings)
    assert [r.body["temperature"] for r in fake.completions] == [0.1, 0.1, 0.7]


def test_many_settings_objects_are_all_sent_as_given(process: JudgeProcess, fake: FakeOpenAI) -> None:
    model = remote(process, fake)
    temperatures = [round(0.01 * i, 2) for i in range(70)]  # more than the shared table holds
    kept = [{"temperature": t} for t in temperatures]
    for settings in kept:
        ask(model, settings)
    ask(model, kept[0])
    assert [r.body["temperature"] for r in fake.completions] == [*temperatures, 0.0]


def test_a_failed_request_is_the_failure_it_classifies_as(process: JudgeProcess, fake: FakeOpenAI) -> None:
    fake.status, fake.error = 429, {"message": "slow down"}
    fake.headers = {"Retry-After": "7"}
    with pytest.raises(CarriedFailure) as raised:
        ask(remote(process, fake))
    failure = classify(raised.value)
    assert (failure.kind, failure.transient, failure.retry_after) == ("rate-limited", True, 7.0)
    assert failure.message.endswith("slow down")
    fake.status, fake.headers = 200, {}
    assert ask(remote(process, fake)).parts  # the process answers on


def test_a_cancelled_request_leaves_the_process_answering_the_next(
    process: JudgeProcess, fake: FakeOpenAI
) -> None:
    model = remote(process, fake)
    fake.delay = 1.0

    async def go() -> None:
        await asyncio.wait_for(model.request(MESSAGES, None, PARAMS), 0.2)

    with pytest.raises(TimeoutError):
        asyncio.run(go())
    fake.delay = 0.0
    assert ask(model).parts == [TextPart('{"reason": "fine", "pass": true}')]


def test_a_closed_or_dead_process_ends_every_call(fake: FakeOpenAI) -> None:
    process = JudgeProcess()
    model = remote(process, fake)
    fake.delay = 2.0

    async def in_flight() -> None:
        call = asyncio.ensure_future(model.request(MESSAGES, None, PARAMS))
        await asyncio.sleep(0.5)
        process._process.kill()
        await asyncio.wait_for(call, ANSWER_WITHIN)

    with pytest.raises(CarriedFailure) as raised:
        asyncio.run(in_flight())
    failure = classify(raised.value)
    assert (failure.kind, failure.transient) == ("judge-process", False)
    assert failure.message == "the judge process ended (exit status -9)"  # it said nothing
    with pytest.raises(CarriedFailure, match="the judge process ended"):
        ask(model)  # and every later call, at once
    process.close()
    with pytest.raises(CarriedFailure, match="judge-process: the judge process ended"):
        ask(model)


def test_a_judge_process_that_cannot_start_names_why(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(judge_process, "WORKER_MODULE", "pytest_llmjudge.models.no_such_worker")
    process = JudgeProcess()
    try:
        with pytest.raises(CarriedFailure) as raised:
            ask(remote(process, fake))
    finally:
        process.close()
    failure = classify(raised.value)
    assert failure.kind == "judge-process"
    why = f"{sys.executable}: No module named pytest_llmjudge.models.no_such_worker"
    assert failure.message == f"the judge process ended (exit status 1): {why}"


def test_after_close_a_call_ends_at_once(fake: FakeOpenAI) -> None:
    process = JudgeProcess()
    model = remote(process, fake)
    process.close()
    with pytest.raises(CarriedFailure, match="judge-process: the run is over"):
        ask(model)
    assert fake.completions == []


def answering(processes: JudgeProcesses, count: int) -> None:
    deadline = time.monotonic() + ANSWER_WITHIN
    while sum(process.answering for process in processes.started) < count:
        assert time.monotonic() < deadline, "the judge processes did not start"
        time.sleep(0.05)


def test_a_second_judge_process_starts_once_the_server_closes_each_connection(fake: FakeOpenAI) -> None:
    processes = JudgeProcesses(most=2)
    try:
        model = remote(processes, fake, None)
        assert (
            model.model_name == "fake-judge" and model.profile["default_structured_output_mode"] == "native"
        )
        answering(processes, 1)
        for _ in range(3):  # a server that keeps its connections: one process
            ask(model, {"temperature": 0.75})
        assert len(processes.started) == 1
        assert fake.completions[-1].body["temperature"] == 0.75
        fake.headers = {"Connection": "close"}
        ask(model)  # the first answer that says so
        ask(model)  # the next call starts the second process
        assert len(processes.started) == 2
        answering(processes, 2)

        async def two_at_once() -> list[int]:
            calls = [asyncio.ensure_future(model.request(MESSAGES, None, PARAMS)) for _ in range(2)]
            await asyncio.sleep(0.2)
            in_flight = [process.in_flight for process in processes.started]
            await asyncio.wait_for(asyncio.gather(*calls), ANSWER_WITHIN)
            return in_flight

        fake.delay = 0.5
        assert asyncio.run(two_at_once()) == [1, 1]  # each call to the process with fewer in flight
        assert len(processes.started) == 2  # never more than ``most``
    finally:
        processes.close()
    with pytest.raises(CarriedFailure, match="the run is over"):
        ask(model)


def test_one_judge_process_when_told_so_after_close_or_when_the_first_has_ended(fake: FakeOpenAI) -> None:
    fake.headers = {"Connection": "close"}
    processes = JudgeProcesses(most=1)
    try:
        model = remote(processes, fake, None)
        for _ in range(3):
            ask(model)
        assert len(processes.started) == 1
    finally:
        processes.close()
    processes = JudgeProcesses(most=2)
    model = remote(processes, fake, None)
    ask(model)  # its server closes connections: the next call would start a second process
    processes.close()
    with pytest.raises(CarriedFailure, match="the run is over"):
        ask(model)
    assert len(processes.started) == 1  # but the run is over
    processes = JudgeProcesses(most=2)
    try:
        model = remote(processes, fake, None)
        ask(model)
        ask(model)
        answering(processes, 2)
        processes.started[0]._process.kill()
        processes.started[0]._reader.join(ANSWER_WITHIN)
        for _ in range(3):  # the one still answering takes every call
            assert ask(model).parts == [TextPart('{"reason": "fine", "pass": true}')]
    finally:
        processes.close()


def test_two_judge_processes_at_most_on_two_cpus_or_more_and_one_in_an_xdist_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    for cpus, most in ((None, 1), (1, 1), (2, 2), (16, 2)):
        monkeypatch.setattr(judge_process.os, "cpu_count", lambda cpus=cpus: cpus)
        processes = JudgeProcesses()
        processes.close()
        assert processes.most == most
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    processes = JudgeProcesses()
    processes.close()
    assert processes.most == 1
    assert JudgeProcesses(most=3).most == 3


def test_build_model_sends_from_the_process_only_when_given_one(fake: FakeOpenAI) -> None:
    started: list[JudgeProcess] = []

    def start() -> JudgeProcess:
        started.append(JudgeProcess())
        return started[-1]

    try:
        model = build_model("openai:fake-judge", f"{fake.url}/v1", process=start)
        assert isinstance(model, RemoteModel) and len(started) == 1
        assert ask(model).model_name == "fake-judge-2024-07-18"
        assert not isinstance(build_model("fake-judge", f"{fake.url}/v1"), RemoteModel)
        hosted = build_model("test")  # another provider's model string: this process calls it
        assert not isinstance(hosted, RemoteModel) and len(started) == 1
    finally:
        for one in started:
            one.close()


# -- the judge process's side, message by message ---------------------------------------------


def handled(messages: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """What a Worker answers to ``messages``, once every request it started has ended."""
    answers = io.BytesIO()

    async def go() -> None:
        worker = Worker(answers)
        for message in messages:
            worker.handle(message)
        mine = asyncio.current_task()
        deadline = time.monotonic() + ANSWER_WITHIN
        while [t for t in asyncio.all_tasks() if t is not mine and not t.done()]:
            assert time.monotonic() < deadline, "a request the worker started never ended"
            await asyncio.sleep(0.01)  # every request the worker started has answered or ended

    asyncio.run(go())
    answers.seek(0)
    found = []
    while (frame := read_frame(answers)) is not None:
        found.append(frame)
    return found


def test_the_worker_answers_each_request_with_its_number_and_the_server_time(fake: FakeOpenAI) -> None:
    fake.headers = {"openai-processing-ms": "40"}
    spec = ModelSpec(f"{fake.url}/v1", "fake-judge", None, 100_000)
    answers = handled(
        [("model", 1, spec), ("share", 2, {"temperature": 0.5}), ("share", 3, PARAMS),
         ("request", 7, 1, MESSAGES, 2, 3)]
    )  # fmt: skip
    ((kind, call, response, server),) = answers
    assert (kind, call) == ("answered", 7)
    assert response.parts == [TextPart('{"reason": "fine", "pass": true}')]
    assert server == (pytest.approx(0.04), 1, False, False)
    assert fake.completions[0].body["temperature"] == 0.5
    fake.headers = {"openai-processing-ms": "40", "Connection": "close"}
    ((*_, server),) = handled(
        [("model", 1, spec), ("share", 2, None), ("share", 3, PARAMS), ("request", 8, 1, MESSAGES, 2, 3)]
    )
    assert server == (pytest.approx(0.04), 1, False, True)  # its server closes each connection


def test_the_worker_builds_its_judge_with_the_key_and_the_response_cap_it_is_given(
    fake: FakeOpenAI,
) -> None:
    request = ("request", 4, 1, MESSAGES, 2, 3)
    shared = [("share", 2, None), ("share", 3, PARAMS)]
    answers = handled(
        [("model", 1, ModelSpec(f"{fake.url}/v1", "fake-judge", "sk-w", 100_000)), *shared, request]
    )
    assert answers[0][0] == "answered" and fake.completions[0].auth == "Bearer sk-w"
    capped = ModelSpec(f"{fake.url}/v1", "fake-judge", None, 50)
    answers = handled([("model", 1, capped), *shared, request])
    ((kind, _, fields, _),) = answers
    assert (kind, fields[0]) == ("failed", "response-too-large")


def test_the_worker_answers_a_failure_with_its_fields(fake: FakeOpenAI) -> None:
    fake.status, fake.error = 503, {"message": "overloaded"}
    spec = ModelSpec(f"{fake.url}/v1", "fake-judge", None, 100_000)
    answers = handled(
        [("model", 1, spec), ("share", 2, None), ("share", 3, PARAMS), ("request", 4, 1, MESSAGES, 2, 3)]
    )
    ((kind, call, fields, server),) = answers
    assert (kind, call) == ("failed", 4)
    assert fields[0] == "http-503" and fields[2] is True and fields[1].endswith("overloaded")
    assert server == (0.0, 1, True, False)  # a response came, and did not say its time


def test_the_worker_cancels_forgets_and_stops_when_told(
    fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.delay = 1.0
    spec = ModelSpec(f"{fake.url}/v1", "fake-judge", None, 100_000)
    answers = handled(
        [("model", 1, spec), ("share", 2, None), ("share", 3, PARAMS), ("request", 4, 1, MESSAGES, 2, 3),
         ("cancel", 4), ("cancel", 4), ("cancel", 99), ("forget", 0)]
    )  # fmt: skip
    assert answers == []  # the cancelled request never answers
    # a cancel that comes too late (the call ended) is nothing, here or in the loop's callbacks
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    with pytest.raises(KeyError):
        handled([("model", 1, spec), ("share", 2, None), ("forget", 0), ("request", 4, 1, MESSAGES, 2, 2)])


def test_frames_round_trip_and_a_cut_frame_is_the_end() -> None:
    stream = io.BytesIO()
    write_frame(stream, ("share", 1, {"a": [1, 2]}))
    write_frame(stream, ("stop", 0))
    data = stream.getvalue()
    assert read_frame(io.BytesIO(data)) == ("share", 1, {"a": [1, 2]})
    assert read_frame(io.BytesIO(data[:3])) is None
    assert read_frame(io.BytesIO(data[:10])) is None
    assert read_frame(io.BytesIO(b"")) is None


def test_what_each_response_says_of_its_time_and_connection_adds_up_over_the_call() -> None:
    def said(*responses: dict[str, str]) -> tuple[float | None, int, bool]:
        with timed_call() as server:
            for headers in responses:
                note_response(httpx.Headers(headers))
        return server.known, server.responses, server.closed

    assert said({"openai-processing-ms": "100"}, {"openai-processing-ms": "50"}) == (
        pytest.approx(0.15),
        2,
        False,
    )
    assert said({"openai-processing-ms": "0"}) == (0.0, 1, False)
    for bad in ("-5", "nan", "inf", "soon"):
        assert said({"openai-processing-ms": bad})[0] is None
    assert said({"openai-processing-ms": "100"}, {})[0] is None  # one response did not say
    assert said({"Connection": "keep-alive, Close"})[2] is True
    assert said({"Connection": "keep-alive"}, {"Connection": "closed"})[2] is False
    assert said({"Connection": "close"}, {"Connection": "keep-alive"})[2] is True  # once is enough
    note_response(httpx.Headers({"openai-processing-ms": "5"}))  # outside a call: nothing to add to

    with timed_call() as server:
        note_seconds(0.25, 1, False)
        note_seconds(0.5, 2, False)
    assert (server.known, server.responses) == (0.75, 3)
    with timed_call() as server:
        note_seconds(0.25, 1, True)
        note_seconds(0.5, 1, False)
    assert (server.seconds, server.known) == (0.75, None)
