"""The local judge server's child process (``python -m pytest_llmjudge.local.child CONFIG``)
and the parent's side of talking to it.

``xllamacpp.Server`` runs llama.cpp's server on threads of the process that builds it. The
server is therefore built in a child process so that a crash in llama.cpp cannot take pytest
down and its logs go to a file. The child reports its address on a pipe, then waits for that
pipe's other end, its stdin, to close: it closes on ``stop()``, at exit, and when the parent
dies in any way (Ctrl-C, SIGTERM, SIGKILL), so no process or port outlives the run. The child
ignores SIGINT: Ctrl-C is the parent's to handle.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from .model_file import LocalServerError

CHILD_MODULE = "pytest_llmjudge.local.child"
HANDSHAKE = "LLMJUDGE-LOCAL-SERVER "


def child_command(config: dict[str, Any]) -> list[str]:
    """The command line that starts the child process serving ``config``."""
    return [sys.executable, "-m", CHILD_MODULE, json.dumps(config)]


def await_handshake(process: subprocess.Popen[bytes], deadline: float, log: Path) -> str:
    """The address the child reports in its handshake; a ``LocalServerError`` if it fails or times out."""
    assert process.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    stdout = process.stdout

    def read() -> None:
        for line in iter(stdout.readline, b""):
            lines.put(line)
            if line.startswith(HANDSHAKE.encode()):
                return
        lines.put(b"")

    threading.Thread(target=read, name="llmjudge-local-handshake", daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise LocalServerError(f"the local judge server did not start in time{log_tail(log)}") from None
        if not line:
            code = process.wait()
            raise LocalServerError(
                f"the local judge server exited with status {code} while starting{log_tail(log)}"
            )
        if line.startswith(HANDSHAKE.encode()):
            message = json.loads(line[len(HANDSHAKE) :])
            if "error" in message:
                raise LocalServerError(
                    f"the local judge server failed to start: {message['error']}{log_tail(log)}"
                )
            return str(message["url"]).rstrip("/")


def end_process(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Close the child's stdin (its signal to stop), then escalate to SIGTERM and SIGKILL."""
    try:
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(5.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    except BaseException:  # a second Ctrl-C while waiting: the child must still go
        process.kill()
        process.wait()
        raise
    finally:
        if process.stdout is not None:
            process.stdout.close()


def log_tail(log: Path, count: int = 12) -> str:
    """The server log's last error lines (or last lines), to quote in an error message."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    errors = [line for line in lines if " E " in line]
    tail = (errors or lines)[-count:]
    return f"\n  server log {log}:\n    " + "\n    ".join(tail) if tail else f" (server log {log} is empty)"


def _serve(config: dict[str, Any], report: IO[str]) -> int:
    """Child process: run the server until stdin closes; the first line on ``report`` is the handshake."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        xllamacpp = importlib.import_module("xllamacpp")
        params = xllamacpp.CommonParams()
        params.model.path = config["model"]
        params.model_alias = {config["alias"]}
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.n_parallel = config["parallel"]
        params.n_ctx = config["ctx"]
        params.n_predict = config["max_tokens"]
        params.cpuparams.n_threads = config["threads"]
        params.cpuparams_batch.n_threads = config["threads"]
        params.sampling.temp = 0.0  # judges decode greedily unless a request asks otherwise
        params.ui = False
        server = xllamacpp.Server(params)
    except Exception as exc:
        report.write(HANDSHAKE + json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        report.flush()
        return 1
    report.write(HANDSHAKE + json.dumps({"url": server.listening_address, "pid": os.getpid()}) + "\n")
    report.flush()
    sys.stdin.buffer.read()  # returns when the parent closes the pipe or dies
    # ~Server waits for requests in flight; the session is over, so leave at once instead.
    os._exit(0)


def main() -> int:
    # Anything llama.cpp prints on stdout goes to the log; the handshake keeps a private copy of fd 1.
    report = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return _serve(json.loads(sys.argv[1]), report)


if __name__ == "__main__":
    sys.exit(main())
