"""A fake OpenAI server with the Batch API, for tests, on this machine in a thread.

``with serve() as fake:`` listens at ``fake.url`` (no ``/v1``) and answers as the OpenAI SDK calls it:

- ``POST /v1/files`` stores an uploaded batch input file (multipart), ``GET /v1/files/{id}/content``
  returns a stored file, ``DELETE /v1/files/{id}`` forgets it;
- ``POST /v1/batches`` creates a batch of an input file, ``GET /v1/batches/{id}`` shows it, and
  ``POST /v1/batches/{id}/cancel`` cancels it. A batch stays ``in_progress`` for ``fake.polls``
  status checks, then runs every line of its input file through the Responses endpoint and is
  ``completed`` with an output file;
- ``POST /v1/responses`` and ``POST /v1/chat/completions`` answer one live request.

Every answer is a judge verdict ``fake.rule(text)`` of the request's text (default: a pass unless the
text holds ``FAIL-ME``), as a call of the request's first tool when it offers tools, else as JSON text.
Each reports ``fake.input_tokens`` and ``fake.output_tokens`` as its usage. ``fake.failures`` maps an
endpoint (``"POST /v1/files"``, ``"POST /v1/batches"``, ``"GET /v1/batches"``,
``"GET /v1/files/content"``) to the HTTP status it answers with instead. Every request is kept in
``fake.requests``; ``fake.live`` counts the live calls and ``fake.batched`` the requests run in batches.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


def default_rule(text: str) -> dict[str, Any]:
    """A pass unless the request's text holds ``FAIL-ME``."""
    failed = "FAIL-ME" in text
    return {"reason": "marked to fail" if failed else "looks right", "pass": not failed}


@dataclass(frozen=True)
class Request:
    """One request the fake server received."""

    method: str
    path: str
    at: float = field(default_factory=time.monotonic, compare=False)  # when it arrived


@dataclass
class FakeBatchServer:
    """What the fake server answers, and what it was asked."""

    rule: Callable[[str], dict[str, Any]] = default_rule
    input_tokens: int = 1000
    output_tokens: int = 100
    polls: int = 1  # status checks a batch stays in progress for
    failures: dict[str, int] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    live: int = 0
    batched: int = 0
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _httpd: ThreadingHTTPServer | None = field(default=None, repr=False)

    @property
    def created_batches(self) -> int:
        return sum(1 for r in self.requests if (r.method, r.path) == ("POST", "/v1/batches"))

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{len(self.files) + len(self.batches) + 1}"

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The answer to one Responses or chat completion request body."""
        verdict = json.dumps(self.rule(json.dumps(body)))
        if "messages" in body:
            return 200, _chat_completion(body, verdict, self.input_tokens, self.output_tokens)
        return 200, _response(body, verdict, self.input_tokens, self.output_tokens)

    def run_batch(self, batch: dict[str, Any]) -> None:
        """Runs every line of ``batch``'s input file and writes its output file."""
        lines = []
        for line in self.files[batch["input_file_id"]].decode().splitlines():
            item = json.loads(line)
            status, answer = self.answer(item["body"])
            lines.append(
                json.dumps(
                    {"custom_id": item["custom_id"], "response": {"status_code": status, "body": answer}}
                )
            )
            self.batched += 1
        output_id = self._new_id("file")
        self.files[output_id] = "\n".join(lines).encode()
        count = len(lines)
        batch.update(status="completed", output_file_id=output_id)
        batch["request_counts"] = {"total": count, "completed": count, "failed": 0}

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


def _usage_chat(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": input_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }


def _chat_completion(body: dict[str, Any], verdict: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": verdict}
    if body.get("tools"):
        name = body["tools"][0]["function"]["name"]
        call = {"id": "call-1", "type": "function", "function": {"name": name, "arguments": verdict}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": _usage_chat(tokens_in, tokens_out),
    }


def _response(body: dict[str, Any], verdict: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    tools = [t for t in body.get("tools") or [] if t.get("type") == "function"]
    item: dict[str, Any]
    if tools:
        item = {"type": "function_call", "id": "fc-1", "call_id": "call-1", "name": tools[0]["name"]}
        item.update(arguments=verdict, status="completed")
    else:
        text = {"type": "output_text", "text": verdict, "annotations": []}
        item = {
            "type": "message",
            "id": "msg-1",
            "role": "assistant",
            "status": "completed",
            "content": [text],
        }
    usage = {
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    return {
        "id": "resp-1",
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model", "fake"),
        "status": "completed",
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "usage": usage,
    }


def _batch_object(batch_id: str, input_file_id: str) -> dict[str, Any]:
    return {
        "id": batch_id,
        "object": "batch",
        "endpoint": "/v1/responses",
        "input_file_id": input_file_id,
        "completion_window": "24h",
        "status": "in_progress",
        "created_at": int(time.time()),
        "request_counts": {"total": 0, "completed": 0, "failed": 0},
        "polls": 0,
    }


_BATCH = re.compile(r"^/v1/batches/([^/]+)(/cancel)?$")
_FILE_CONTENT = re.compile(r"^/v1/files/([^/]+)/content$")


class _Handler(BaseHTTPRequestHandler):
    fake: ClassVar[FakeBatchServer]

    def _failure(self, endpoint: str) -> bool:
        status = self.fake.failures.get(endpoint)
        if status is None:
            return False
        self._reply(status, {"error": {"message": f"{endpoint} is down", "type": "server_error"}})
        return True

    def do_GET(self) -> None:
        fake = self.fake
        fake.requests.append(Request("GET", self.path))
        if found := _BATCH.match(self.path):
            if self._failure("GET /v1/batches"):
                return
            with fake._lock:
                batch = fake.batches.get(found.group(1))
                if batch is None:
                    self._reply(404, {"error": {"message": "no such batch"}})
                    return
                batch["polls"] += 1
                if batch["status"] == "in_progress" and batch["polls"] > fake.polls:
                    fake.run_batch(batch)
                self._reply(200, {k: v for k, v in batch.items() if k != "polls"})
        elif found := _FILE_CONTENT.match(self.path):
            if self._failure("GET /v1/files/content"):
                return
            data = fake.files.get(found.group(1))
            if data is None:
                self._reply(404, {"error": {"message": "no such file"}})
                return
            self._send(200, data, "application/octet-stream")
        else:
            self._reply(404, {"error": {"message": f"no {self.path}"}})

    def do_DELETE(self) -> None:
        self.fake.requests.append(Request("DELETE", self.path))
        file_id = self.path.rsplit("/", 1)[-1]
        self.fake.files.pop(file_id, None)
        self._reply(200, {"id": file_id, "object": "file", "deleted": True})

    def do_POST(self) -> None:
        fake = self.fake
        fake.requests.append(Request("POST", self.path))
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/v1/files":
            self._upload(data)
        elif self.path == "/v1/batches":
            self._create_batch(json.loads(data))
        elif found := _BATCH.match(self.path):
            with fake._lock:
                batch = fake.batches[found.group(1)]
                batch["status"] = "cancelled"
                self._reply(200, {k: v for k, v in batch.items() if k != "polls"})
        elif self.path in {"/v1/responses", "/v1/chat/completions"}:
            with fake._lock:
                fake.live += 1
            self._reply(*fake.answer(json.loads(data)))
        else:
            self._reply(404, {"error": {"message": f"no {self.path}"}})

    def _upload(self, data: bytes) -> None:
        if self._failure("POST /v1/files"):
            return
        head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
        message = BytesParser(policy=HTTP).parsebytes(head + data)
        content: bytes = next(
            bytes(part.get_payload(decode=True))
            for part in message.iter_parts()
            if part.get_param("name", header="content-disposition") == "file"
        )
        with self.fake._lock:
            file_id = self.fake._new_id("file")
            self.fake.files[file_id] = content
        obj = {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time())}
        self._reply(200, {**obj, "filename": "batch.jsonl", "purpose": "batch", "status": "processed"})

    def _create_batch(self, body: dict[str, Any]) -> None:
        if self._failure("POST /v1/batches"):
            return
        with self.fake._lock:
            batch_id = self.fake._new_id("batch")
            batch = _batch_object(batch_id, body["input_file_id"])
            self.fake.batches[batch_id] = batch
            self._reply(200, {k: v for k, v in batch.items() if k != "polls"})

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(**knobs: Any) -> Iterator[FakeBatchServer]:
    """A fake batch server listening on 127.0.0.1 until the block ends; ``knobs`` are its fields."""
    fake = FakeBatchServer(**knobs)
    handler = type("FakeBatchHandler", (_Handler,), {"fake": fake})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    fake.url, fake._httpd = f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    try:
        yield fake
    finally:
        fake.stop()
