"""Who answered a model call, as a plain value (no pydantic-ai import: verdicts and cache entries
carry it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Answered:
    """The model that answered a call, as its provider named it, and its serving fingerprint."""

    model: str
    fingerprint: str | None = None

    def label(self) -> str:
        """``gpt-4o-mini-2024-07-18 (fingerprint fp_1)``."""
        return self.model + (f" (fingerprint {self.fingerprint})" if self.fingerprint else "")

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "fingerprint": self.fingerprint}

    @classmethod
    def from_json(cls, data: Any) -> Answered:
        """The identity of ``to_json``'s object; ``TypeError`` for anything else."""
        if not isinstance(data, dict):
            raise TypeError("who answered is a JSON object")
        model, fingerprint = data.get("model"), data.get("fingerprint")
        if not isinstance(model, str) or not model:
            raise TypeError("'model' of who answered must be a name")
        if fingerprint is not None and not isinstance(fingerprint, str):
            raise TypeError("'fingerprint' of who answered must be a string or null")
        return cls(model, fingerprint)
