"""What went wrong in a judge call: an exception as a ``JudgeFailure`` saying whether a retry can
help (a refused connection, an HTTP status, an answer that does not validate, a timeout)."""

from __future__ import annotations

import asyncio
import json

from pydantic_ai.exceptions import (
    ContentFilterError,
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelServerError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)

from .failure import CarriedFailure, JudgeFailure
from .response_cap import UnreadableResponse


def _refused(exc: BaseException) -> tuple[bool, str]:
    """Whether ``exc`` (or an exception it was raised from) is a refused connection, and the URL
    of the request it was for, if any exception in the chain carries one."""
    refused, url = False, ""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        refused = refused or isinstance(current, ConnectionRefusedError) or "refused" in str(current).lower()
        url = url or _url_of(current)
        current = current.__cause__ or current.__context__
    return refused, url


def _url_of(error: BaseException) -> str:
    """The URL of the request ``error`` was raised for; "" when it carries none."""
    try:
        url = getattr(getattr(error, "request", None), "url", None)
    except RuntimeError:  # httpx's error without its request raises it
        return ""
    return "" if url is None else str(url)


def _carried(exc: BaseException) -> UnreadableResponse | CarriedFailure | None:
    """The exception in ``exc``'s chain that carries the failure the call ends with, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, UnreadableResponse | CarriedFailure):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


ERROR_TEXT_LIMIT = 200


def _error_text(body: object) -> str:
    """The message text of an HTTP error body, on one line and at most 200 characters: the
    ``message`` of an OpenAI-style ``{"error": {"message": …}}`` body, else the body as text."""
    found: object = body
    for _ in range(3):  # {"error": {"message": …}}, {"message": …} or {"error": "…"}
        if isinstance(found, dict):
            found = found.get("message", found.get("error", found.get("detail", found)))
        else:
            break
    text = found if isinstance(found, str) else json.dumps(found, default=str)
    text = " ".join(text.split())
    return text if len(text) <= ERROR_TEXT_LIMIT else text[: ERROR_TEXT_LIMIT - 1] + "…"


def classify(exc: BaseException) -> JudgeFailure:
    """Map a judge-call exception to a ``JudgeFailure`` saying whether a retry can help."""
    if isinstance(exc, JudgeFailure):
        return exc
    # over the response cap (maybe wrapped by the SDK), or classified by the judge process
    if (carried := _carried(exc)) is not None:
        return carried.failure
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(exc, ModelHTTPError):
        status = exc.status_code
        transient = status in {408, 409, 425, 429} or status >= 500
        kind = "rate-limited" if status == 429 else f"http-{status}"
        hint = {401: " (check the API key)", 403: " (access denied)", 400: " (bad request)"}.get(status, "")
        _, url = _refused(exc)
        where = url or exc.model_name
        return JudgeFailure(
            kind, f"HTTP {status} from {where}{hint}: {_error_text(exc.body)}", transient, retry_after
        )
    if isinstance(exc, ModelRateLimitError):
        return JudgeFailure("rate-limited", str(exc), True, retry_after)
    if isinstance(exc, ModelRequestRejectedError):
        return JudgeFailure("rejected", str(exc), False)
    if isinstance(exc, ModelConnectionError | ModelServerError | ModelUnavailableError):
        refused, url = _refused(exc)
        if refused:  # nothing listens there: retrying cannot help
            return JudgeFailure("connection-refused", f"connection refused by {url or 'the judge server'}")
        where = f" ({url})" if url else ""
        return JudgeFailure("transport", f"{exc}{where}", True, retry_after)
    if isinstance(exc, ModelAPIError):
        return JudgeFailure("api-error", str(exc), False, retry_after)
    if isinstance(exc, ContentFilterError):
        return JudgeFailure("refusal", f"the judge refused to answer: {exc}", False)
    if isinstance(exc, UnexpectedModelBehavior):
        return JudgeFailure("invalid-output", f"judge output did not validate: {exc}", True)
    if isinstance(exc, UsageLimitExceeded):
        return JudgeFailure("usage-limit", str(exc), False)
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return JudgeFailure("timeout", "the judge call timed out", True)
    if isinstance(exc, ConnectionError | OSError):
        return JudgeFailure("transport", f"{type(exc).__name__}: {exc}", True)
    return JudgeFailure("judge-error", f"{type(exc).__name__}: {exc}", False)
