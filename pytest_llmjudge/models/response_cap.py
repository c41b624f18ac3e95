"""A cap on the size of a judge's HTTP response, held on the decoded bytes while they stream in.

A hostile or broken server can send a gzip bomb (1 MB that inflates to 1 GB), an endless chunked
body, or a 50 MB verdict; read whole, each drives the run to gigabytes of memory. The judge's
HTTP client reads every response through ``CappedTransport``: it asks only for the encodings it
can inflate in bounded steps (gzip, deflate), inflates them itself, and ends the call with a
``JudgeFailure`` naming the cap as soon as more than ``limit`` decoded bytes arrived.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import httpx2 as httpx

from ..suite.settings import DEFAULTS
from .failure import JudgeFailure
from .server_time import note_response

DEFAULT_MAX_RESPONSE_BYTES = DEFAULTS.max_response_bytes
_STEP = 1 << 16  # bytes inflated at a time: a bomb never inflates more than this before it is counted
_ACCEPTED = "gzip, deflate"
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class UnreadableResponse(Exception):
    """A response the judge's HTTP client stopped reading; ``failure`` is what the case ends with.

    Not a ``JudgeFailure`` itself: the HTTP and async machinery it passes through assigns to
    ``__traceback__``, which a frozen dataclass refuses.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    @property
    def failure(self) -> JudgeFailure:
        return JudgeFailure(self.kind, self.message)  # not transient: the next answer is as large


def too_large(limit: int) -> UnreadableResponse:
    return UnreadableResponse(
        "response-too-large",
        f"the judge's response is larger than the {limit:,}-byte cap "
        "(--llmjudge-max-response-bytes); the rest was not read",
    )


class _Inflater:
    """One content encoding undone in steps of at most ``_STEP`` output bytes."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._inflate = zlib.decompressobj(_WBITS[encoding])
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        while True:
            try:
                piece = self._inflate.decompress(data, _STEP)
            except zlib.error as exc:
                if self._encoding == "deflate" and not self._started:  # raw deflate, no zlib header
                    self._inflate, self._started = zlib.decompressobj(-zlib.MAX_WBITS), True
                    continue
                raise httpx.DecodingError(f"cannot decode the {self._encoding} response: {exc}") from None
            self._started = True
            if piece:
                yield piece
            data = self._inflate.unconsumed_tail
            if not data and len(piece) < _STEP:
                return

    def flush(self) -> bytes:
        return self._inflate.flush()


class CappedStream(httpx.AsyncByteStream):
    """The decoded body of ``raw``; raises ``JudgeFailure`` past ``limit`` bytes."""

    def __init__(self, raw: httpx.AsyncByteStream, encodings: list[str], limit: int) -> None:
        self._raw = raw
        self._inflaters = [_Inflater(e) for e in reversed(encodings)]  # the last one applied goes first
        self._limit = limit
        self._seen = 0

    def _through(self, pieces: Iterable[bytes], stage: int) -> Iterator[bytes]:
        """``pieces`` decoded by the inflaters from ``stage`` on, lazily: nothing is inflated
        before the bytes before it were counted."""
        if stage == len(self._inflaters):
            yield from pieces
            return
        inflater = self._inflaters[stage]
        yield from self._through((out for piece in pieces for out in inflater.feed(piece)), stage + 1)

    def _counted(self, pieces: Iterable[bytes]) -> Iterator[bytes]:
        for piece in pieces:
            self._seen += len(piece)
            if self._seen > self._limit:
                raise too_large(self._limit)
            yield piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._raw:
            for piece in self._counted(self._through([chunk], 0)):
                yield piece
        for stage, inflater in enumerate(self._inflaters):
            for piece in self._counted(self._through([inflater.flush()], stage + 1)):
                yield piece

    async def aclose(self) -> None:
        await self._raw.aclose()


class CappedTransport(httpx.AsyncBaseTransport):
    """``inner``'s responses, decoded and capped at ``limit`` bytes (see the module docstring)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = _ACCEPTED
        response = await self._inner.handle_async_request(request)
        headers = httpx.Headers(response.headers)
        note_response(headers)
        encodings = [e.strip().lower() for e in headers.get("Content-Encoding", "").split(",")]
        encodings = [e for e in encodings if e and e != "identity"]
        unknown = [e for e in encodings if e not in _WBITS]
        if unknown:
            await response.aclose()
            raise UnreadableResponse(
                "invalid-response", f"the judge's response has content encoding {unknown[0]!r}"
            )
        if encodings:
            del headers["Content-Encoding"]
            headers.pop("Content-Length", None)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=headers,
            stream=CappedStream(response.stream, encodings, self._limit),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def capped_client(limit: int, **options: Any) -> httpx.AsyncClient:
    """An HTTP client for the OpenAI SDK (its defaults: timeouts, connection limits, redirects)
    whose responses are capped at ``limit`` decoded bytes."""
    from openai import DefaultAsyncHttpxClient
    from openai._constants import DEFAULT_CONNECTION_LIMITS

    inner = httpx.AsyncHTTPTransport(limits=DEFAULT_CONNECTION_LIMITS)
    client: httpx.AsyncClient = DefaultAsyncHttpxClient(transport=CappedTransport(inner, limit), **options)
    return client
