"""One local judge server for an xdist run, started when the first worker must judge a case.

The controller opens a broker on a loopback port before its workers exist and exports its
address (``BROKER_ENV``, ``TOKEN@127.0.0.1:PORT``). A worker that must judge asks the broker for
the server's URL (``request_server``): the first request starts the server in the controller,
which owns it and stops it at the end of the run; later requests get the same URL, and a server
that failed to start is the same error for every worker. A run whose cases all come from the
cache asks nothing and starts no server. Requests without the token are refused.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable

from .loopback import LoopbackService
from .model_file import LocalServerError

BROKER_ENV = "LLMJUDGE_LOCAL_SERVER_BROKER"
START_TIMEOUT = 600.0  # preparing the packaged model and loading it can take minutes


class ServerBroker(LoopbackService):
    """Answers each request with ``start()``'s URL, calling ``start`` on the first request only."""

    def __init__(self, start: Callable[[], str]) -> None:
        self._start = start
        self._lock = threading.Lock()
        self._answer: dict[str, str] | None = None
        super().__init__(BROKER_ENV, "llmjudge-server-broker")

    def handle(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.settimeout(10.0)
                token = connection.makefile("rb").readline().decode("ascii", "replace").strip()
                answer = self.answer() if token == self.token else {"error": "refused: wrong token"}
                connection.sendall(json.dumps(answer).encode() + b"\n")
            except OSError:
                pass  # the worker went away

    def answer(self) -> dict[str, str]:
        """``{"url": …}`` of the server, started now if this is the first request, or ``{"error": …}``."""
        with self._lock:
            if self._answer is None:
                try:
                    self._answer = {"url": self._start()}
                except LocalServerError as exc:
                    self._answer = {"error": str(exc)}
            return self._answer


def request_server(address: str, timeout: float = START_TIMEOUT) -> str:
    """The URL of the run's local judge server, from the broker at ``address`` (which starts it
    on the first request); a ``LocalServerError`` with the controller's reason if it did not start."""
    token, _, host_port = address.rpartition("@")
    host, _, port = host_port.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as connection:
            connection.sendall(token.encode() + b"\n")
            line = connection.makefile("rb").readline()
        answer = json.loads(line)
    except (OSError, ValueError) as exc:
        raise LocalServerError(
            f"the run's local judge server broker at {host_port} did not answer ({exc})"
        ) from None
    if "error" in answer:
        raise LocalServerError(str(answer["error"]))
    return str(answer["url"])
