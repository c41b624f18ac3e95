"""Judge models from configuration: pydantic-ai model objects, their settings, and the one name
(``judge_label``) that a configuration goes by in the cache, in replay and in reports."""

from __future__ import annotations

import hashlib
import os
import re
import urllib.parse
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings

from ..local.model_file import PACKAGED_MODEL_NAME, LocalServerError
from ..local.server import is_local_spec, normalize_base_url, parse_local_spec
from .failure import JudgeFailure
from .identity import with_fingerprint
from .openai_adapter import prepare_once, settle_platform
from .redact import clean_url, redact
from .remote_model import ModelSpec
from .response_cap import DEFAULT_MAX_RESPONSE_BYTES

if TYPE_CHECKING:
    from .judge_process import JudgeProcesses


class ModelConfigError(Exception):
    """A judge model that cannot be built from its configuration."""


def model_label(model: models.Model) -> str:
    """The label of a model object (one given by the ``pytest_llmjudge_model`` hook)."""
    return f"{model.system}:{model.model_name}"


def judge_label(value: str, base_url: str | None = None) -> str:
    """The label of a judge configured by a model string: the same whether the run calls the
    model or replays the cache, so a ``replay`` run finds what a ``use`` run stored.

    ``local`` → ``local:gemma-3-270m-q4_k_m`` (the pinned packaged model); ``local:PATH.gguf`` →
    ``local:<file stem>#<digest of the file>``, so a different file of the same name is another judge;
    ``local:http://host:port[#MODEL]`` → ``local:http://host:port/v1[#MODEL]`` (the server);
    a name served through ``--llmjudge-base-url`` → ``openai:NAME@URL``; else the string itself.
    A URL in a label has no user or password and no secret query values (``clean_url``): the
    label reaches the terminal, JUnit, the results file, the report and the cache file.
    """
    if is_local_spec(value):
        try:
            spec = parse_local_spec(value)
        except LocalServerError as exc:
            raise ModelConfigError(redact(str(exc))) from None
        if spec.source == "packaged":
            return f"local:{PACKAGED_MODEL_NAME}"
        if spec.source == "gguf" and spec.path is not None:
            return f"local:{spec.path.stem}#{model_file_digest(spec.path)}"
        return f"local:{clean_url(spec.url or '')}" + (f"#{spec.model}" if spec.model else "")
    if base_url:
        name = value.split(":", 1)[1] if value.startswith("openai:") else value
        try:
            normalize_base_url(base_url)  # a usable http(s)://host:port URL, or an error
        except LocalServerError:
            shown = clean_url(base_url.strip())
            raise ModelConfigError(f"base URL {shown!r} is not an http(s)://host:port URL") from None
        # the URL the requests go to, as given (some servers serve the API below another path)
        return f"openai:{name}@{clean_url(base_url.strip().rstrip('/'))}"
    return redact(value)


_DIGEST_CHUNK = 1 << 20


def model_file_digest(path: Path) -> str:
    """A cheap fingerprint of a model file: its size and the sha256 of its first and last MiB
    (12 hex digits); ``missing`` when it cannot be read (the server start reports that)."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            sha = hashlib.sha256(str(size).encode())
            sha.update(file.read(_DIGEST_CHUNK))
            if size > _DIGEST_CHUNK:
                file.seek(max(_DIGEST_CHUNK, size - _DIGEST_CHUNK))
                sha.update(file.read(_DIGEST_CHUNK))
    except OSError:
        return "missing"
    return sha.hexdigest()[:12]


LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def key_allowed(base_url: str, allowed: tuple[str, ...]) -> bool:
    """Whether the API key may be sent to ``base_url``: one of the ``allowed`` base URLs (the run's
    own), or this machine (a local server)."""
    host = urllib.parse.urlsplit(base_url.strip()).hostname or ""
    if host in LOOPBACK_HOSTS:
        return True
    try:
        url = normalize_base_url(base_url)
        return any(url == normalize_base_url(a) for a in allowed if a)
    except LocalServerError:
        return False


def build_model(
    value: str | models.Model,
    base_url: str | None = None,
    *,
    send_key: bool = True,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    process: Callable[[], JudgeProcesses] | None = None,
) -> models.Model:
    """A pydantic-ai model from a model string (``openai:…``, ``anthropic:…``, …) or object.

    With ``base_url`` the model name is served by an OpenAI-compatible server (vLLM, Ollama,
    llama.cpp): ``openai:NAME`` or plain ``NAME`` both work; the API key goes there only with
    ``send_key`` (a placeholder otherwise). Responses of more than ``max_response_bytes`` end
    the call, for every provider whose client takes an HTTP client (the OpenAI-compatible ones).
    With ``process`` (the run's judge process, started on first use) a model served at
    ``base_url`` sends its requests from that process (``judge_process``).
    """
    if isinstance(value, models.Model):
        return value
    if base_url:
        name = value.split(":", 1)[1] if value.startswith("openai:") else value
        key = os.environ.get("LLMJUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if process is not None:
            spec = ModelSpec(base_url, name, key if send_key else None, max_response_bytes)
            return process().model(spec, compatible_profile())
        return openai_compatible_model(
            base_url, name, api_key=key if send_key else None, max_response_bytes=max_response_bytes
        )
    try:
        factory = partial(_capped_provider, limit=max_response_bytes)
        built = models.infer_model(value, provider_factory=factory)
    except Exception as exc:  # pydantic-ai raises UserError and provider-specific errors here
        raise ModelConfigError(redact(f"cannot use judge model {value!r}: {_why(exc)}")) from None
    return _ready(with_fingerprint(built))


_MISSING_KEY = re.compile(r"Set the `([A-Z][A-Z0-9_]*)` environment variable")


def _why(exc: Exception) -> str:
    """Why pydantic-ai could not build a model, in this plugin's words: a missing API key (or
    server URL) names the variable to set and the ways to run without it, not pydantic-ai's
    ``Agent('test')``, which a benchmark run cannot use."""
    text = str(exc)
    found = _MISSING_KEY.search(text)
    if found is None:
        return text.split(" To try Pydantic AI without an API key")[0]
    return (
        f"{found.group(1)} is not set: set it in the environment, or judge offline with "
        "--llmjudge-model local (the bundled model), or rerun cached verdicts without calling any "
        "model with --llmjudge-cache=replay"
    )


def _capped_provider(name: str, limit: int) -> Any:
    """pydantic-ai's provider for ``name``, given an HTTP client with the response cap when it
    takes one."""
    import inspect

    from pydantic_ai.providers import infer_provider, infer_provider_class

    if name.startswith("gateway/"):
        return infer_provider(name)
    provider = infer_provider_class(name)
    if "http_client" in inspect.signature(provider.__init__).parameters:
        from .response_cap import capped_client

        return provider(http_client=capped_client(limit))  # type: ignore[call-arg]
    return provider()


def replay_only_model(label: str) -> models.Model:
    """A stand-in for ``--llmjudge-cache=replay``: labelled like the real judge, never called."""

    def refuse(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise JudgeFailure("cache-miss", "replay mode never calls the judge model")

    return FunctionModel(refuse, model_name=label)


def model_settings(temperature: float | None, max_tokens: int | None, timeout: float | None) -> ModelSettings:
    """The settings of a judge configuration. ``max_retries=0``: the provider SDK's client makes one
    request per attempt, as the run's own retries (``llmjudge_attempts``) are the only retry layer."""
    settings = ModelSettings(max_retries=0)
    if temperature is not None:
        settings["temperature"] = temperature
    if max_tokens is not None:
        settings["max_tokens"] = max_tokens
    if timeout is not None:
        settings["timeout"] = timeout
    return settings


def openai_compatible_model(
    base_url: str,
    model_name: str,
    *,
    native_json: bool = True,
    max_string_length: int | None = 600,
    api_key: str | None = None,
    settings: ModelSettings | None = None,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
) -> models.Model:
    """A pydantic-ai OpenAI chat model for an OpenAI-compatible server at ``base_url``.

    With ``native_json`` structured output goes as ``response_format: json_schema``, which the
    server enforces while sampling, so even a tiny model returns a valid verdict object; without
    it the schema goes into the instructions (prompted output with ``json_object`` mode).
    ``max_string_length`` becomes the ``maxLength`` of every unbounded string in the schema, so a
    model caught repeating itself inside ``reason`` is made to close it instead of running into
    the token limit. A placeholder key is sent unless ``api_key`` is given, so no
    ``OPENAI_API_KEY`` leaks to a local server. A response of more than ``max_response_bytes``
    (decoded) ends the call as a ``response-too-large`` error.
    """
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from .response_cap import capped_client

    profile = compatible_profile(native_json, max_string_length)
    # one request per attempt: the run's retries are the only retry layer
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or "no-key-needed",
        max_retries=0,
        http_client=capped_client(max_response_bytes),
    )
    provider = OpenAIProvider(openai_client=client)
    chat = OpenAIChatModel(model_name, provider=provider, profile=profile, settings=settings)
    return _ready(with_fingerprint(chat))


def compatible_profile(native_json: bool = True, max_string_length: int | None = 600) -> ModelProfile:
    """The profile of a judge served by an OpenAI-compatible server (see ``openai_compatible_model``)."""
    from pydantic_ai.profiles import InlineDefsJsonSchemaTransformer, JsonSchemaTransformer
    from pydantic_ai.profiles.openai import OpenAIModelProfile

    transformer: type[JsonSchemaTransformer] = InlineDefsJsonSchemaTransformer
    if max_string_length is not None:
        cap = max_string_length

        class CappedStrings(InlineDefsJsonSchemaTransformer):
            def transform(self, schema: dict[str, Any]) -> dict[str, Any]:
                if schema.get("type") == "string" and not schema.keys() & {"maxLength", "enum", "const"}:
                    schema["maxLength"] = cap
                return schema

        transformer = CappedStrings
    return OpenAIModelProfile(
        supports_json_schema_output=native_json,
        supports_json_object_output=True,
        default_structured_output_mode="native" if native_json else "prompted",
        json_schema_transformer=transformer,
        openai_supports_strict_tool_definition=False,
    )


def _ready(model: models.Model) -> models.Model:
    """``model`` with its per-call set-up done once (``openai_adapter``): its OpenAI client knows
    the platform it names in every request's headers, and each request template's settings and
    parameters are prepared once."""
    settle_platform(model)
    prepare_once(model)
    return model
