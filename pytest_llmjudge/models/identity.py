"""Who answered a model call: the model the provider says answered (its resolved snapshot, e.g.
``gpt-4o-mini-2024-07-18`` for the alias ``gpt-4o-mini``) and the serving fingerprint it reported.

pydantic-ai's ``ModelResponse`` carries ``model_name``; the OpenAI chat model drops the
``system_fingerprint`` of a completion, so ``with_fingerprint`` keeps it in the response's
``provider_details`` (the hook pydantic-ai leaves for that: ``_process_provider_details``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse

from .answered import Answered

FINGERPRINT = "system_fingerprint"


def answered_by(messages: Sequence[ModelMessage]) -> Answered | None:
    """Who answered the last response among ``messages`` (the one that gave the answer); None when
    no response names its model."""
    for message in reversed(messages):
        if isinstance(message, ModelResponse) and message.model_name:
            details = message.provider_details or {}
            fingerprint = details.get(FINGERPRINT)
            return Answered(message.model_name, fingerprint if isinstance(fingerprint, str) else None)
    return None


def with_fingerprint(model: models.Model) -> models.Model:
    """``model``, keeping the ``system_fingerprint`` of each chat completion in its responses'
    ``provider_details`` when it is pydantic-ai's OpenAI chat model (as built, not a subclass)."""
    if type(model).__name__ != "OpenAIChatModel":  # no import of the OpenAI SDK for other models
        return model
    from pydantic_ai.models.openai import OpenAIChatModel

    if type(model) is OpenAIChatModel:
        model.__class__ = _fingerprinted_class(OpenAIChatModel)
    return model


# one subclass per class object: a process that imports pydantic-ai's OpenAI module again (pytest's
# in-process runs drop the modules a run imported) gets a subclass of the class it uses now
_CLASSES: dict[type[Any], type[Any]] = {}


def _fingerprinted_class(base: type[Any]) -> type[Any]:
    if base not in _CLASSES:

        class FingerprintedChatModel(base):  # type: ignore[misc]
            def _process_provider_details(self, response: Any) -> dict[str, Any] | None:
                details = super()._process_provider_details(response) or {}
                fingerprint = getattr(response, FINGERPRINT, None)
                if isinstance(fingerprint, str) and fingerprint:
                    details[FINGERPRINT] = fingerprint
                return details or None

        _CLASSES[base] = FingerprintedChatModel
    return _CLASSES[base]
