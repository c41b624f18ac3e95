"""A token-checked service on a loopback port that an xdist controller opens before its workers
exist, publishing its address (``TOKEN@127.0.0.1:PORT``) in an environment variable they inherit:
the local judge server's broker and the run's budget broker."""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
from collections.abc import MutableMapping


class LoopbackService:
    """Accepts connections until ``close``, each handled by ``handle`` on a thread of its own."""

    def __init__(self, variable: str, name: str) -> None:
        self.variable = variable  # the environment variable that publishes the address
        self.token = secrets.token_hex(16)
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.address = f"{self.token}@127.0.0.1:{self._socket.getsockname()[1]}"
        self._exported: tuple[MutableMapping[str, str], str | None] | None = None
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def handle(self, connection: socket.socket) -> None:
        raise NotImplementedError

    def export(self, environ: MutableMapping[str, str]) -> None:
        """Publish the address to child processes (xdist workers); ``close`` takes it back."""
        self._exported = (environ, environ.get(self.variable))
        environ[self.variable] = self.address

    def close(self) -> None:
        # shutdown first: close alone leaves the thread blocked in accept() listening (Linux)
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()
        if self._exported is not None:
            environ, previous = self._exported
            if previous is None:
                environ.pop(self.variable, None)
            else:
                environ[self.variable] = previous
            self._exported = None

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self.handle, args=(connection,), daemon=True).start()
