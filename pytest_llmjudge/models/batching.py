"""Judge models that send their requests through their provider's batch API.

The batching is pydantic-ai's own: its ``BatchModelRequests`` capability wraps the model, queues the
requests of the run in one pool, submits them in batches, checks on them with a growing interval,
resubmits expired or transiently failed ones, and marks each batched response
``processing: batch`` so that genai-prices prices it at the batch rate. This module only picks the
model that has a batch API (an OpenAI-compatible server's Responses model for a chat model) and
waits for a suspended response the way an agent run does.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from .failure import JudgeFailure
from .pending_batches import COLLECT_HINT, PendingRecord, PendingStore

# The providers whose pydantic-ai models have a batch API (``Model.batch_max_requests``).
BATCH_PROVIDERS = ("openai: (the Responses API)", "anthropic:", "google-gla:")
# Settings a batch cannot honour per request: the batch's own wait and the run's retries replace them.
_LIVE_ONLY_SETTINGS = ("timeout", "max_retries")
COLLECT_LINE = f"collect with {COLLECT_HINT}"
# How long the first request of a run waits for the others before their batch is submitted: the
# scheduler starts every call of a run within a moment.
BATCH_MAX_WAIT = 1.0


class BatchUnsupportedError(Exception):
    """A judge model whose provider has no batch API."""


def batch_capable(model: models.Model) -> models.Model:
    """``model``, or the model of the same provider and client that has a batch API: an OpenAI chat
    model (``--llmjudge-base-url``, ``openai-chat:``) becomes its Responses model. Raises
    ``BatchUnsupportedError`` naming the providers that have one."""
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

    if isinstance(model, OpenAIChatModel):
        provider = model._provider  # the same client: base URL, key and response cap
        model = OpenAIResponsesModel(model.model_name, provider=provider, profile=model.profile)
    if model.batch_max_requests is None:
        raise BatchUnsupportedError(
            f"{model.system}:{model.model_name} has no batch API; --llmjudge-batch needs a judge of a "
            f"provider that has one: {', '.join(BATCH_PROVIDERS)}"
        )
    return model


def batch_judge(
    model: models.Model,
    label: str,
    settings: ModelSettings,
    *,
    mode: str,
    store: PendingStore,
    wait: float,
    poll_interval: float,
) -> tuple[models.Model, ModelSettings]:
    """A judge configuration's model and settings for ``--llmjudge-batch=MODE``: the model batched,
    and a call's timeout the batch wait (``wait`` seconds). Raises ``BatchUnsupportedError``."""
    if label.startswith("local:"):
        raise BatchUnsupportedError(
            f"{label} (a local judge) has no batch API; --llmjudge-batch needs a judge of a provider "
            f"that has one: {', '.join(BATCH_PROVIDERS)}"
        )
    inner = batched(model, max_wait=BATCH_MAX_WAIT, poll_interval=poll_interval)
    return BatchJudgeModel(inner, label, mode, store), ModelSettings(**{**settings, "timeout": wait})


class BatchJudgeModel(WrapperModel):
    """A batched judge: sends requests without the settings a batched request cannot carry
    (``batch_settings``), and keeps the requests it submitted in the run's ``PendingStore`` until
    their batch answers (``send``)."""

    def __init__(self, wrapped: models.Model, label: str, mode: str, store: PendingStore) -> None:
        super().__init__(wrapped)
        self.judge, self.mode, self.store = label, mode, store
        self.claimed: set[str] = set()  # waiting requests of earlier runs this run collects

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        kept = None if model_settings is None else batch_settings(model_settings)
        return await self.wrapped.request(messages, kept, model_request_parameters)

    def claim(self, key: str) -> ModelResponse | None:
        """A request an earlier run submitted for ``key`` and no call of this run collects yet."""
        for record in self.store.waiting(key):
            if record.response_id not in self.claimed:
                self.claimed.add(record.response_id)
                return ModelMessagesTypeAdapter.validate_python([record.response])[0]  # type: ignore[return-value]
        return None

    def keep(self, key: str, response: ModelResponse) -> None:
        """Records a submitted request until its batch answers."""
        batch = ((response.provider_details or {}).get("batch") or {}).get("batch") or {}
        dumped = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
        response_id = response.provider_response_id or ""
        self.claimed.add(response_id)
        self.store.put(key, PendingRecord(str(batch.get("id", "")), response_id, dumped))


async def send(
    model: models.Model,
    request_digest: str,
    messages: list[ModelMessage],
    settings: ModelSettings | None,
    params: ModelRequestParameters,
) -> ModelResponse:
    """``model``'s response to ``messages``. A batched judge collects the request an earlier run
    submitted for the same request, else submits it; the request stays recorded as waiting until
    its batch answers (a run stopped meanwhile leaves it for the next), and under ``submit`` the
    call ends there as a ``batch-pending`` failure."""
    if not isinstance(model, BatchJudgeModel):
        return await model.request(messages, settings, params)
    key = model.store.key(request_digest, model.judge)
    response = model.claim(key)
    if response is None:
        response = await model.request(messages, settings, params)
        if response.state != "suspended":
            return response
        model.keep(key, response)
    if model.mode == "submit":
        raise JudgeFailure("batch-pending", f"submitted in batch {_batch_id(response)}; {COLLECT_LINE}")
    response_id = response.provider_response_id or ""
    try:
        answered = await settled(model, messages, response, settings, params)
    except Exception:
        model.store.remove(key, response_id)  # its batch failed it: a retry submits it again
        raise
    except BaseException:
        # the wait ran out or the run stopped: a retry of this call collects the same request
        # instead of submitting it again, and a stopped run leaves it recorded for the next
        model.claimed.discard(response_id)
        raise
    model.store.remove(key, response_id)
    return answered


def _batch_id(response: ModelResponse) -> str:
    ticket = (response.provider_details or {}).get("batch") or {}
    return str((ticket.get("batch") or {}).get("id", "?"))


def batched(model: models.Model, *, max_wait: float, poll_interval: float) -> models.Model:
    """``model`` wrapped so that its requests wait in one batch pool (pydantic-ai's
    ``BatchModelRequests``): a batch is submitted when its oldest request has waited ``max_wait``
    seconds, and checked first after ``poll_interval`` seconds, then less often."""
    from pydantic_ai.capabilities import BatchModelRequests

    capable = batch_capable(model)
    poll = timedelta(seconds=poll_interval)
    batching = BatchModelRequests(
        max_wait=timedelta(seconds=max_wait),
        poll_interval=poll,
        max_poll_interval=max(poll, timedelta(minutes=10)),
    )
    wrapped = batching.get_wrapper_model(capable)
    return wrapped if wrapped is not None else capable


def batch_settings(settings: ModelSettings) -> ModelSettings:
    """``settings`` without those a batched request cannot carry (a per-request timeout, the SDK's
    retries): the batch wait bounds the call, and resubmission is pydantic-ai's."""
    kept = ModelSettings(**settings)
    for key in _LIVE_ONLY_SETTINGS:
        kept.pop(key, None)  # type: ignore[misc]
    return kept


async def settled(
    model: models.Model,
    messages: list[ModelMessage],
    response: ModelResponse,
    settings: ModelSettings | None,
    params: ModelRequestParameters,
) -> ModelResponse:
    """``response``, or once it is a suspended batch request, the response its batch gives: checked
    on as an agent run checks on it (the model's ``continuation_delay`` between checks)."""
    while response.state == "suspended":
        delay = model.continuation_delay(response)
        if delay is None:
            return response
        await asyncio.sleep(delay)
        response = await model.request([*messages, response], settings, params)
    return response
