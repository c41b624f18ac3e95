"""The judges of one run: a configuration per distinct benchmark ``judge:`` choice, and the local
judge servers they need, each started only when a case must be judged by it. Knows nothing of
pytest.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..suite.settings import RunSettings

if TYPE_CHECKING:
    from pydantic_ai.settings import ModelSettings

    from ..cost.pricing import Price
    from ..local.broker import ServerBroker
    from ..local.server import LocalServer
    from ..suite.files import Benchmark
    from .config import JudgeConfig
    from .judge_process import JudgeProcesses

# Seconds before a submitted batch is first checked (then 1.5 times longer each check, up to 10 min).
BATCH_POLL_VARIABLE = "LLMJUDGE_BATCH_POLL"
DEFAULT_BATCH_POLL = 30.0
# The label of the judge a replay run with no model names: its cases are looked up by request only.
UNNAMED_JUDGE = ""


class JudgeSetupError(Exception):
    """The run cannot judge at all (no model, an unusable cache, a local server that won't start)."""


@dataclass(frozen=True)
class JudgeChoice:
    """A benchmark's judge: its own ``judge:`` settings over the run's (``None`` = not set)."""

    model: str | None
    base_url: str | None
    temperature: float | None
    max_tokens: int | None
    timeout: float
    batch: str  # off, on, submit or collect: the run's --llmjudge-batch, or on for judge.batch

    @classmethod
    def of(cls, benchmark: Benchmark, run: RunSettings) -> JudgeChoice:
        own = benchmark.spec.judge
        return cls(
            (own.model if own and own.model else None) or run.model,
            (own.base_url if own and own.base_url else None) or run.base_url,
            own.temperature if own and own.temperature is not None else run.temperature,
            own.max_tokens if own and own.max_tokens is not None else run.max_tokens,
            own.timeout if own and own.timeout is not None else run.timeout,
            _batch_mode(own.batch if own else None, run.batch),
        )


def _batch_mode(own: bool | None, run: str) -> str:
    """A benchmark's batch mode: ``judge.batch: true`` batches its calls as the run does, or ``on``
    in a run that does not; ``false`` sends them live; unset, the run's ``--llmjudge-batch``."""
    if own is None:
        return run
    return (run if run != "off" else "on") if own else "off"


@dataclass(eq=False)
class Judges:
    settings: RunSettings
    root: Path
    default_model: Callable[[], Any]  # the pytest_llmjudge_model hook: a model object or None
    # what the run says of its local judges: "NAME served at URL …" / "NAME at URL …"
    local_lines: dict[str, str] = field(default_factory=dict)
    # calls in flight at most per server (``endpoint``): a local judge server's slots
    endpoint_slots: dict[str, int] = field(default_factory=dict)
    _configs: dict[JudgeChoice, JudgeConfig] = field(default_factory=dict)
    _local_servers: dict[str, LocalServer] = field(default_factory=dict)
    _keyless: set[str] = field(default_factory=set)  # benchmark base URLs not sent the API key
    # local judges not started yet: id of the placeholder model -> (placeholder, spec, started config)
    _deferred_local: dict[int, tuple[Any, str, JudgeConfig | None]] = field(default_factory=dict)
    _broker: ServerBroker | None = None  # an xdist controller's: starts the server workers ask for
    _task_models: dict[tuple[str, str | None], Any] = field(default_factory=dict)
    # one start at a time: a case whose task produced its output starts the server from a thread
    _starting: threading.Lock = field(default_factory=threading.Lock)
    process: JudgeProcesses | None = None  # sends the judge calls of models served at a base URL

    def judge_process(self) -> JudgeProcesses:
        """The run's judge process (``judge_process``), started the first time a model needs it."""
        from .judge_process import JudgeProcesses

        with self._starting:
            if self.process is None:
                self.process = JudgeProcesses()
        return self.process

    def _process_for(self, batch: str) -> Callable[[], JudgeProcesses] | None:
        """Where a model's requests are sent from: the judge process, unless the run turned it off
        or batches them (a batch is submitted by the model object itself)."""
        return self.judge_process if self.settings.judge_process == "on" and batch == "off" else None

    def config(self, benchmark: Benchmark) -> JudgeConfig:
        """The judge for ``benchmark``; raises LookupError when no model is configured anywhere
        (but in replay, where a case's cached verdict is found by its request alone)."""
        from .config import JudgeConfig
        from .models import build_model, judge_label, model_label, model_settings, replay_only_model

        choice = JudgeChoice.of(benchmark, self.settings)
        if choice not in self._configs:
            value: Any = choice.model
            if value is None:
                value = self.default_model()
            replay = self.settings.cache == "replay"
            if value is None and not replay:
                raise LookupError("no judge model")
            settings = model_settings(choice.temperature, choice.max_tokens, choice.timeout)
            if value is None or isinstance(value, str):
                label = UNNAMED_JUDGE if value is None else judge_label(value, choice.base_url)
                if replay or value is None:
                    model = replay_only_model(label)  # never called: no server, no API key
                elif label.startswith("local:"):
                    # started only when a case needs it (``with_server``): a cached run needs none
                    model = replay_only_model(label)
                    self._deferred_local[id(model)] = (model, value, None)
                else:
                    send_key = may_send_key(benchmark, self.settings.base_url, self._keyless)
                    model = build_model(
                        value,
                        choice.base_url,
                        send_key=send_key,
                        max_response_bytes=self.settings.max_response_bytes,
                        process=self._process_for(choice.batch),
                    )
            else:
                model = build_model(value)
                label = model_label(model)
            price = self.price(label, base_url_of(model))
            if choice.batch != "off" and not replay:
                model, settings = self._batched(model, label, settings, choice.batch)
            self._configs[choice] = JudgeConfig(model, label, settings, price=price)
        return self._configs[choice]

    def _batched(
        self, model: Any, label: str, settings: ModelSettings, mode: str
    ) -> tuple[Any, ModelSettings]:
        """``--llmjudge-batch``: the judge's requests go through its provider's batch API."""
        from .batching import BatchUnsupportedError, batch_judge
        from .models import ModelConfigError
        from .pending_batches import PENDING_FOLDER, PendingStore

        poll = float(os.environ.get(BATCH_POLL_VARIABLE) or DEFAULT_BATCH_POLL)
        store = PendingStore(self.root / PENDING_FOLDER)
        wait = self.settings.batch_wait
        try:
            return batch_judge(model, label, settings, mode=mode, store=store, wait=wait, poll_interval=poll)
        except BatchUnsupportedError as exc:
            raise ModelConfigError(str(exc)) from None

    def planned(self, benchmark: Benchmark) -> tuple[str, Price | None, ModelSettings]:
        """The label, price and settings of ``benchmark``'s judge, without building its model
        (the estimate calls nothing); LookupError when no model is configured anywhere."""
        from .models import judge_label, model_label, model_settings

        choice = JudgeChoice.of(benchmark, self.settings)
        if choice in self._configs:
            known = self._configs[choice]
            return known.model_name, known.price, known.settings
        value: Any = choice.model if choice.model is not None else self.default_model()
        if value is None:
            raise LookupError("no judge model")
        settings = model_settings(choice.temperature, choice.max_tokens, choice.timeout)
        if isinstance(value, str):
            label = judge_label(value, choice.base_url)
            return label, self.price(label), settings
        label = model_label(value)
        return label, self.price(label, base_url_of(value)), settings

    def price(self, label: str, base_url: str | None = None) -> Price | None:
        """The price of a model's tokens: ``--llmjudge-price`` first, the local judge free, else
        genai-prices by the base URL's or the label's provider."""
        from ..cost.pricing import price_for
        from ..cost.spending import price_overrides

        return price_for(label, base_url, price_overrides(self.settings.price))

    def local_model(self, spec: str) -> Any:
        """A judge served by a llama.cpp server this run starts (or an xdist controller started)."""
        from ..local.server import LocalServerError
        from .models import openai_compatible_model

        try:
            server = self._local_server(spec)
        except LocalServerError as exc:
            raise JudgeSetupError(str(exc)) from None
        model = openai_compatible_model(
            server.url, server.model_name, max_response_bytes=self.settings.max_response_bytes
        )
        if server.slots is not None:  # more would wait in its queue, their timeouts running
            self.endpoint_slots[endpoint(model)] = server.slots
        return model

    def _local_server(self, spec: str, *, own: bool = False) -> LocalServer:
        """The server of ``spec``: with ``own`` started by this process, else perhaps the one an
        xdist controller started (``server_for_session``)."""
        from ..local.server import available_cores, server_for_session, start_local_server

        if spec not in self._local_servers:
            log = self.root / ".llmjudge" / "local-server.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            start = start_local_server if own else server_for_session
            self._local_servers[spec] = start(
                spec, log_path=log, parallel=local_slots(available_cores(), self.settings.concurrency)
            )
        from .redact import clean_url

        server = self._local_servers[spec]
        url = clean_url(server.url)
        self.local_lines[server.model_name] = (
            f"local judge {server.model_name} served at {url} for this session (stopped)"
            if server.owned
            else f"local judge {server.model_name} at {url} (a server this run did not start)"
        )
        return server

    def serve_workers(self, spec: str) -> None:
        """An xdist controller: start ``spec``'s server when the first worker asks for it (a run
        whose verdicts are all cached starts none), and stop it with the run."""
        from ..local.broker import ServerBroker

        self._broker = ServerBroker(lambda: self._local_server(spec, own=True).url)
        self._broker.export(os.environ)

    def with_server(self, config: JudgeConfig) -> JudgeConfig:
        """``config`` with its local judge server started, the first time a case needs it."""
        deferred = self._deferred_local.get(id(config.model))
        if deferred is None:
            return config
        with self._starting:
            placeholder, spec, started = self._deferred_local[id(config.model)]
            if started is None:
                started = replace(config, model=self.local_model(spec))
                self._deferred_local[id(placeholder)] = (placeholder, spec, started)
                for choice, known in self._configs.items():
                    if known is config:
                        self._configs[choice] = started
        return started

    def task_model(self, value: str, base_url: str | None) -> Any:
        """The pydantic-ai model of a model task: ``local`` shares the judge's server (one bundled
        server serves both); the API key goes only to the run's own base URLs or this machine.
        Under ``--llmjudge-batch`` its requests go through its provider's batch API as a judge's do."""
        from .models import build_model, judge_label, key_allowed

        key = (value, base_url)
        if key not in self._task_models:
            if value.split(":", 1)[0] == "local":
                model = self.local_model(value)
            else:
                allowed = (self.settings.base_url or "", self.settings.task_base_url or "")
                send_key = base_url is None or key_allowed(base_url, allowed)
                limit = self.settings.max_response_bytes
                process = self._process_for(self.settings.batch)
                model = build_model(
                    value, base_url, send_key=send_key, max_response_bytes=limit, process=process
                )
                if self.settings.batch != "off" and self.settings.task_cache != "replay":
                    model = self._batched_task(model, f"task {judge_label(value, base_url)}")
            self._task_models[key] = model
        return self._task_models[key]

    def _batched_task(self, model: Any, label: str) -> Any:
        """A model task's model under ``--llmjudge-batch``: batched as a judge is (its requests
        recorded under its own label), or live when its provider has no batch API."""
        from .batching import BatchUnsupportedError
        from .models import ModelConfigError

        try:
            batched, _ = self._batched(model, label, cast("ModelSettings", {}), self.settings.batch)
        except (BatchUnsupportedError, ModelConfigError):
            return model
        return batched

    def stop(self) -> None:
        """Stop the local judge servers this run started."""
        if self._broker is not None:
            self._broker.close()
            self._broker = None
        for server in self._local_servers.values():
            server.stop()
        self._local_servers.clear()
        if self.process is not None:
            self.process.close()
            self.process = None


def base_url_of(model: Any) -> str | None:
    """The base URL a pydantic-ai model sends to (its provider's), None when it has none."""
    try:
        url = getattr(model, "base_url", None)
    except Exception:  # a model's property may need a client it cannot build
        return None
    return url if isinstance(url, str) else None


def endpoint(model: Any) -> str:
    """The server a model calls (its provider and base URL): Retry-After pauses are per server."""
    return f"{getattr(model, 'system', '')}@{getattr(model, 'base_url', None) or ''}"


def local_slots(cores: int, concurrency: int) -> int:
    """Parallel slots of the local judge: on 2 cores one slot judged 10 cases faster than two
    (32 s vs 37 s, bench/local_judge.py), since both slots compete for the same cores."""
    return max(1, min(concurrency, 1 if cores <= 2 else 2))


def may_send_key(benchmark: Benchmark, run_base_url: str | None, warned: set[str]) -> bool:
    """A benchmark's own ``judge.base_url`` gets the API key only if the run allows that server
    (its own base URL, or this machine); else a placeholder key goes, and the run says so once."""
    import warnings

    from .models import key_allowed
    from .redact import clean_url

    own = benchmark.spec.judge
    url = own.base_url if own and own.base_url else None
    if url is None or key_allowed(url, (run_base_url or "",)):
        return True
    if url not in warned:
        warned.add(url)
        warnings.warn(
            f"{benchmark.location}: judge.base_url: {clean_url(url)} is neither the run's base URL "
            "(--llmjudge-base-url) nor this machine; the API key is not sent there",
            UserWarning,
            stacklevel=1,
        )
    return False
