"""The ``task:`` of a benchmark: what produces a case's candidate output when the case has none.

Two kinds: a Python callable named by import path (``task: "app.extract:run"``), or a model with
a prompt-template file (``task: {model: ..., prompt_file: ...}``). The run-wide
``--llmjudge-task`` names a callable; a benchmark's own ``task:`` wins over it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from .text import shown
from .validation import HINT_SEPARATOR
from .vocabulary import IMPORT_PATH

ExampleOrder = Literal["random", "as_listed"]
Compose = Literal["random", "balanced"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FewShotSpec(_Strict):
    """Few-shot examples for a model task, chosen reproducibly (``seed``).

    ``compose``: ``random`` draws from the whole pool, ``balanced`` as evenly as it can across
    classes, a mapping (``{pass: 2, fail: 1}``) that many of each class. An example's class is its
    ``ground_truth`` when that is a plain value, else its ``label``. ``reuse_examples``: every case
    gets the same examples (else each case its own draw). A case is never its own example.
    """

    n_shots: Annotated[int, Field(ge=0, le=64)] = 0
    compose: Compose | dict[str, Annotated[int, Field(ge=0)]] = "random"
    example_order: ExampleOrder = "random"
    reuse_examples: bool = False
    seed: int = 42
    examples_file: str | None = None

    @field_validator("compose")
    @classmethod
    def _counts(cls, value: Any) -> Any:
        if isinstance(value, dict) and not value:
            raise ValueError(
                f"per-class counts name no class{HINT_SEPARATOR}"
                "write random, balanced or {pass: 2, fail: 1}"
            )
        return value


class ModelTaskSpec(_Strict):
    """A model answering a rendered prompt template (``task: {model: ..., prompt_file: ...}``)."""

    model: str | None = None  # --llmjudge-task-model replaces it, and supplies one when absent
    base_url: str | None = None
    prompt_file: str
    settings: dict[str, Any] | None = None  # pydantic-ai model settings: temperature, max_tokens, …
    output_schema: str | None = None  # a JSON schema file: the answer is structured output
    few_shot: FewShotSpec | None = None


def _kind(value: Any) -> str:
    return "task:import-path" if isinstance(value, str) else "task:model"


def _import_path(value: str) -> str:
    if not re.match(IMPORT_PATH, value):
        raise ValueError(
            f"{shown(value, 60)} is not an import path{HINT_SEPARATOR}"
            "name a callable as 'package.module:function' (the module importable from the rootdir)"
        )
    return value


ImportPath = Annotated[str, AfterValidator(_import_path)]
# the kind is told by the value's type, so an error names one kind's fields, not both kinds'
TaskField = Annotated[
    Annotated[ImportPath, Tag("task:import-path")] | Annotated[ModelTaskSpec, Tag("task:model")],
    Discriminator(_kind),
]
