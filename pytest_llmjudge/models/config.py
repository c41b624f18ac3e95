"""One judge configuration (a resolved model, its settings and price) and the request LLMJudge's
agent builds for it, captured once and reused for every case."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.settings import ModelSettings

if TYPE_CHECKING:
    from ..cost.pricing import Price


@dataclass(frozen=True)
class JudgeConfig:
    """One judge configuration: a resolved model and its settings.

    ``templates`` holds the request LLMJudge's agent builds for this configuration, captured once
    per agent and instructions (see ``RequestTemplate``); ``capturing`` the capture under way, which
    the first wave of concurrent calls all wait for instead of each capturing its own.
    """

    model: models.Model
    model_name: str
    settings: ModelSettings
    templates: dict[tuple[str, str], RequestTemplate | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    capturing: dict[tuple[str, str], asyncio.Task[RequestTemplate | None]] = field(
        default_factory=dict, compare=False, repr=False
    )
    price: Price | None = None  # of the model's tokens; None: not known (tokens counted, no cost)


@dataclass(frozen=True)
class RequestTemplate:
    """The first request LLMJudge's agent sends for one configuration, agent and instructions.

    The agent builds the same request for every case but for the user prompt, at about 4 ms of
    CPU per case (its graph, and the output schema rebuilt on each run). Captured once, the
    request is reused with each case's prompt and sent through the same model's ``request``:
    identical messages, settings and parameters, at a twentieth of the cost.
    """

    request: ModelRequest
    settings: ModelSettings | None
    params: ModelRequestParameters
    accepts_text: bool  # the model answers in text (native or prompted output), not a tool call
    schemas: tuple[str, ...] = ()  # the output schemas sent (a tool's, or the native output's), as JSON

    def messages(self, prompt: str | Sequence[Any]) -> list[ModelMessage]:
        parts = [UserPromptPart(prompt) if isinstance(p, UserPromptPart) else p for p in self.request.parts]
        request = replace(
            self.request,
            parts=parts,
            timestamp=datetime.now(UTC),
            run_id=_new_id(),
            conversation_id=_new_id(),
        )
        return [request]


_IDS = random.Random()


def _new_id() -> str:
    """A random (version 4) UUID like the agent's run ids, without ``uuid4``'s system call: on the
    scheduler's thread every system call hands the GIL to the main thread and waits to get it back."""
    return str(uuid.UUID(int=_IDS.getrandbits(128), version=4))
