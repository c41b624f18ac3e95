"""Judge and model-task models that send their requests through their provider's batch API.

The batching is pydantic-ai's own: its ``BatchModelRequests`` capability wraps the model, queues the
requests of the run in one pool, submits them in batches, checks on them with a growing interval,
resubmits expired or transiently failed ones, and marks each batched response
``processing: batch`` so that genai-prices prices it at the batch rate. This module picks the
model that has a batch API (an OpenAI-compatible server's Responses model for a chat model),
records each submitted request until its batch answers (``BatchJudgeModel``: every request of the
judge, whichever style or pairwise order sends it, whether the call waits in an agent run or in
``settled``), and ends a call whose batch is still running once the run's batch wait is over.
A model task's model is wrapped the same way (``Judges.task_model``), under its own label: its
agent run checks on its suspended response until its batch answers.
"""

from __future__ import annotations

import asyncio
import time
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
PENDING = "batch-pending"
# How long the first request of a run waits for the others before their batch is submitted: the
# scheduler starts every call of a run within a moment.
BATCH_MAX_WAIT = 1.0
# Seconds a call may run past the batch wait (its last check and the download of the results)
# before the run's own per-call timeout stops it: the batch wait ends a call first, as pending.
MIN_LAST_CHECK = 60.0


class PendingFailure(JudgeFailure):
    """A call left waiting in its batch (``batch-pending``). Unlike its frozen base it can pass
    through an async context manager (a model task's agent run), which sets its traceback."""

    def __setattr__(self, name: str, value: object) -> None:
        if name != "__traceback__":
            super().__setattr__(name, value)
        object.__setattr__(self, name, value)


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
    its calls ending as ``batch-pending`` once ``wait`` seconds have passed since its first
    request, and a call's timeout past that. Raises ``BatchUnsupportedError``."""
    if label.startswith("local:"):
        raise BatchUnsupportedError(
            f"{label} (a local judge) has no batch API; --llmjudge-batch needs a judge of a provider "
            f"that has one: {', '.join(BATCH_PROVIDERS)}"
        )
    inner = batched(model, max_wait=BATCH_MAX_WAIT, poll_interval=poll_interval)
    last_check = max(float(settings.get("timeout") or 0.0), MIN_LAST_CHECK)
    return BatchJudgeModel(inner, label, mode, store, wait), ModelSettings(
        **{**settings, "timeout": wait + last_check}
    )


class BatchJudgeModel(WrapperModel):
    """A batched judge. Each request is sent without the settings a batched request cannot carry
    (``batch_settings``); one an earlier run submitted and recorded (the same request body and
    judge) is collected instead of submitted again; a submitted request stays recorded in the run's
    ``PendingStore`` until its batch answers or fails it. Under ``submit`` a call ends as
    ``batch-pending`` once its request is recorded; otherwise it ends so once ``wait`` seconds
    have passed since the judge's first request (the batch wait), its request left recorded."""

    def __init__(
        self, wrapped: models.Model, label: str, mode: str, store: PendingStore, wait: float
    ) -> None:
        super().__init__(wrapped)
        self.judge, self.mode, self.store, self.wait = label, mode, store, wait
        self.claimed: set[str] = set()  # recorded requests a call of this run waits on
        self.keys: dict[str, str] = {}  # the response ID of each of those -> its record's key
        self.deadline: float | None = None  # when the batch wait ends (monotonic seconds)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        kept = None if model_settings is None else batch_settings(model_settings)
        if self.deadline is None:
            self.deadline = time.monotonic() + self.wait
        last = messages[-1] if messages else None
        if isinstance(last, ModelResponse) and last.provider_response_id in self.keys:
            return await self._check(last, messages, kept, model_request_parameters)
        return await self._submit(messages, kept, model_request_parameters)

    async def _submit(
        self, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelResponse:
        key = await self._key(messages, settings, params)
        response = self.claim(key)
        if response is None:
            response = await self.wrapped.request(messages, settings, params)
            if response.state != "suspended":
                return response
            self.keep(key, response)
        if self.mode == "submit":
            raise self._pending(response, f"submitted in batch {batch_id(response)}")
        if self._waited():
            raise self._pending(response, self._still_waiting(response))
        return response

    async def _check(
        self,
        pending: ModelResponse,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> ModelResponse:
        key = self.keys[pending.provider_response_id or ""]
        try:
            response = await self.wrapped.request(messages, settings, params)
        except Exception:
            self._forget(key, pending)  # its batch failed it: a retry submits it again
            raise
        if response.state != "suspended" or self.wrapped.continuation_delay(response) is None:
            self._forget(key, pending)
            return response
        if response.provider_response_id != pending.provider_response_id:  # submitted again
            self._forget(key, pending)
            self.keep(key, response)
        if self._waited():
            raise self._pending(response, self._still_waiting(response))
        return response

    async def _key(
        self, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> str:
        """The record key of a request: its body as the batch API is sent it, and the judge."""
        from pydantic_ai.models.batch import BatchRequest

        encoded = await self.wrapped.batch_encode(
            BatchRequest(
                custom_id="", messages=messages, model_settings=settings, model_request_parameters=params
            )
        )
        return self.store.key(encoded.body, self.judge)

    def claim(self, key: str) -> ModelResponse | None:
        """A request an earlier run submitted for ``key`` and no call of this run waits on yet."""
        for record in self.store.waiting(key):
            if record.response_id not in self.claimed:
                self.claimed.add(record.response_id)
                self.keys[record.response_id] = key
                return ModelMessagesTypeAdapter.validate_python([record.response])[0]  # type: ignore[return-value]
        return None

    def keep(self, key: str, response: ModelResponse) -> None:
        """Records a submitted request until its batch answers."""
        dumped = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
        response_id = response.provider_response_id or ""
        self.claimed.add(response_id)
        self.keys[response_id] = key
        self.store.put(key, PendingRecord(batch_id(response), response_id, dumped))

    def _forget(self, key: str, response: ModelResponse) -> None:
        response_id = response.provider_response_id or ""
        self.store.remove(key, response_id)
        self.claimed.discard(response_id)
        self.keys.pop(response_id, None)

    def leave(self, response: ModelResponse) -> None:
        """Leaves a recorded request waiting for a later call or run (a wait that ended, a stopped
        run): its batch keeps running, and a retry of the call collects it again."""
        response_id = response.provider_response_id or ""
        if self.keys.pop(response_id, None) is not None:
            self.claimed.discard(response_id)
            self.wrapped._release_suspended_response(response)

    def continuation_delay(self, response: ModelResponse) -> float | None:
        """The wrapped model's delay before the next check, cut to what is left of the batch wait:
        its last check is made as the wait ends."""
        delay = self.wrapped.continuation_delay(response)
        if delay is None or self.deadline is None or response.provider_response_id not in self.keys:
            return delay
        return max(0.0, min(delay, self.deadline - time.monotonic()))

    async def cancel_suspended_response(self, response: ModelResponse) -> None:
        """A recorded request is left waiting, never cancelled: a later run collects it."""
        if response.provider_response_id in self.keys:
            self.leave(response)
            return
        await self.wrapped.cancel_suspended_response(response)

    def _waited(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def _still_waiting(self, response: ModelResponse) -> str:
        return f"batch {batch_id(response)} still running after --llmjudge-batch-wait={self.wait:g}s"

    def _pending(self, response: ModelResponse, what: str) -> JudgeFailure:
        self.leave(response)
        return PendingFailure(PENDING, f"{what}; {COLLECT_LINE}")


async def send(
    model: models.Model,
    messages: list[ModelMessage],
    settings: ModelSettings | None,
    params: ModelRequestParameters,
) -> ModelResponse:
    """``model``'s response to ``messages``; a batched judge's once its batch answers
    (``BatchJudgeModel``: submitted or collected, and ``batch-pending`` when the run does not wait)."""
    response = await model.request(messages, settings, params)
    if not isinstance(model, BatchJudgeModel):
        return response
    return await settled(model, messages, response, settings, params)


def batch_id(response: ModelResponse) -> str:
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
    model: BatchJudgeModel,
    messages: list[ModelMessage],
    response: ModelResponse,
    settings: ModelSettings | None,
    params: ModelRequestParameters,
) -> ModelResponse:
    """``response``, or once it is a suspended batch request, the response its batch gives: checked
    on as an agent run checks on it (the model's ``continuation_delay`` between checks). Stopped
    (the run's timeout, Ctrl-C), the request is left recorded for a retry or a later run."""
    try:
        while response.state == "suspended":
            delay = model.continuation_delay(response)
            if delay is None:
                return response
            await asyncio.sleep(delay)
            response = await model.request([*messages, response], settings, params)
    except BaseException:
        model.leave(response)
        raise
    return response
