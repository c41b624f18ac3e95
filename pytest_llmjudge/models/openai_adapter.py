"""The judge's OpenAI client and chat model made ready once, not on every call.

- The OpenAI SDK names the machine's platform in every request's headers. Until its client knows
  the platform, each request looks it up in a worker thread of its own (it may read a file):
  the first 32 requests of a run started 32 threads. ``settle_platform`` looks it up once per
  process, on the calling thread, and gives it to the client.
- pydantic-ai's chat model prepares each request's settings and parameters again on every call
  (merging settings, walking the output schema). A judge sends the same settings and parameters
  objects with every call (its captured request template), so ``prepare_once`` keeps the prepared
  pair for them and hands it back while those objects, and the settings' values, are unchanged.
- A request whose settings carry ``max_retries`` went through a copy of the OpenAI client made
  for it (the SDK takes retries per client only), and a copy does not know the platform: every
  judge call built a client and looked the platform up in a thread. A prepared request leaves
  out a ``max_retries`` equal to the client's own: the client of a judge served at
  ``--llmjudge-base-url`` is built with ``max_retries`` 0, as every judge call's settings say
  (the run's retries are the only retry layer).

The SDK's private names used here are listed in ``PRIVATE_NAMES``; ``tests/test_openai_adapter.py``
checks each still exists, so an upgrade that moves one fails there, by name.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from typing import Any

PRIVATE_NAMES = (
    "openai._base_client.get_platform",
    "openai._base_client.BaseClient._platform",  # an attribute each client sets in __init__
)


@functools.cache
def _platform() -> Any:
    from openai._base_client import get_platform

    return get_platform()


def settle_platform(model: Any) -> None:
    """Tell ``model``'s OpenAI client (if it has one) the platform, looked up once per process."""
    client = _openai_client(model)
    if client is not None and getattr(client, "_platform", None) is None:
        client._platform = _platform()


Prepare = Callable[[Any, Any], tuple[Any, Any]]


def _openai_client(model: Any) -> Any:
    openai = sys.modules.get("openai")  # a model without the OpenAI SDK never imports it
    client = getattr(model, "client", None)
    return client if openai is not None and isinstance(client, openai.AsyncOpenAI) else None


class _Prepared:
    """``model.prepare_request`` with its last answers kept by the identity of the parameters and
    the identity and contents of the settings passed; a ``max_retries`` the client has already is
    left out of the prepared settings."""

    def __init__(self, model: Any) -> None:
        self._prepare: Prepare = model.prepare_request
        self._client = _openai_client(model)
        self._kept: dict[tuple[int, int], tuple[Any, dict[str, Any] | None, Any, tuple[Any, Any]]] = {}

    def __call__(self, settings: Mapping[str, Any] | None, params: Any) -> tuple[Any, Any]:
        key = (id(settings), id(params))
        kept = self._kept.get(key)
        values = None if settings is None else dict(settings)
        if kept is not None and kept[0] is settings and kept[1] == values and kept[2] is params:
            return kept[3]
        prepared = self._without_own_retries(self._prepare(settings, params))
        if len(self._kept) >= 16:  # a run sends a few templates; anything else is not kept long
            self._kept.clear()
        self._kept[key] = (settings, values, params, prepared)  # held: their ids stay theirs
        return prepared

    def _without_own_retries(self, prepared: tuple[Any, Any]) -> tuple[Any, Any]:
        settings, params = prepared
        if self._client is None or not settings or "max_retries" not in settings:
            return prepared
        if settings["max_retries"] != self._client.max_retries:
            return prepared
        return {k: v for k, v in settings.items() if k != "max_retries"} or None, params


def prepare_once(model: Any) -> None:
    """``model.prepare_request`` answered from what it prepared before for the same settings and
    parameters (pydantic-ai's chat model calls it at the start of every request)."""
    prepare = getattr(model, "prepare_request", None)
    if prepare is not None and not isinstance(prepare, _Prepared):
        model.prepare_request = _Prepared(model)
