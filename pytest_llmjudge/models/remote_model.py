"""The judge model on the run's side of the judge process (``judge_process``): a pydantic-ai model
whose requests the process's real model sends."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings

Send = Callable[[list[ModelMessage], ModelSettings | None, ModelRequestParameters], Awaitable[ModelResponse]]


@dataclass(frozen=True)
class ModelSpec:
    """What the child builds a judge from: ``openai_compatible_model``'s arguments."""

    base_url: str
    model_name: str
    api_key: str | None = field(repr=False)  # never shown
    max_response_bytes: int


class RemoteModel(Model):
    """A judge model whose requests a ``JudgeProcess`` sends (see ``judge_process``)."""

    def __init__(self, send: Send, spec: ModelSpec, profile: ModelProfile) -> None:
        super().__init__(profile=profile)
        self._send = send
        self._spec = spec

    @property
    def model_name(self) -> str:
        return self._spec.model_name

    @property
    def system(self) -> str:
        return "openai"

    @property
    def base_url(self) -> str:
        """As the OpenAI client names it: with one trailing slash (prices and Retry-After pauses
        are per base URL)."""
        return self._spec.base_url.rstrip("/") + "/"

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        return await self._send(messages, model_settings, model_request_parameters)
