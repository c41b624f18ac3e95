"""Few-shot examples for model tasks: a frozen config and a reproducible draw from a pool.

The draw depends only on the seed, the case id and the pool (in its order): the same suite picks
the same examples on every run and every machine, so a task's fingerprint, and with it the
output cache, stays valid. A case is never shown itself as an example.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..suite.files import Case
from ..suite.hashing import digest
from ..suite.task_spec import FewShotSpec
from .fields import case_fields

Compose = str | tuple[tuple[str, int], ...]  # 'random', 'balanced', or (class, count) pairs by class


class FewShotError(ValueError):
    """The pool cannot give what the few-shot config asks for."""


@dataclass(frozen=True)
class Example:
    """A labelled case shown to the model: its fields (no ground truth) and its expected output."""

    id: str
    fields: Mapping[str, Any] = field(hash=False)
    output: Any = field(hash=False)  # the case's ground_truth
    label: str = ""  # its class, for ``balanced`` and per-class counts


@dataclass(frozen=True)
class FewShotConfig:
    """``few_shot:`` of a model task, as a hashable value."""

    n_shots: int = 0
    compose: Compose = "random"
    example_order: str = "random"  # or 'as_listed': the pool's order
    reuse_examples: bool = False  # every case gets the same draw
    seed: int = 42

    @classmethod
    def from_spec(cls, spec: FewShotSpec) -> FewShotConfig:
        """The config of ``spec``; per-class counts that disagree with ``n_shots`` raise ``FewShotError``."""
        compose: Compose = (
            spec.compose if isinstance(spec.compose, str) else tuple(sorted(spec.compose.items()))
        )
        if isinstance(compose, tuple) and spec.n_shots not in {0, sum(c for _, c in compose)}:
            raise FewShotError(
                f"n_shots is {spec.n_shots} but the per-class counts of compose add up to "
                f"{sum(c for _, c in compose)}; leave n_shots out, or make them agree"
            )
        return cls(spec.n_shots, compose, spec.example_order, spec.reuse_examples, spec.seed)

    @property
    def shots(self) -> int:
        """How many examples each case gets: ``n_shots``, or the sum of per-class counts."""
        if isinstance(self.compose, tuple):
            return sum(count for _, count in self.compose)
        return self.n_shots

    def fingerprint(self) -> str:
        """A short stable digest of the config (part of a model task's fingerprint)."""
        return digest(asdict(self))[:16]


def class_of(case: Case) -> str:
    """A case's class: its ``ground_truth`` when that is a plain value, else its ``label``."""
    truth = case.spec.ground_truth
    if isinstance(truth, str):
        return truth
    if isinstance(truth, bool | int | float):
        return json.dumps(truth)  # true, 3, 0.5: as YAML and JSON write them
    return case.spec.label or ""


def example_pool(benchmark_code: str, cases: Sequence[Case]) -> tuple[Example, ...]:
    """The cases that have a ``ground_truth``, in order, as examples."""
    return tuple(
        Example(
            case.id,
            case_fields(benchmark_code, case, sees_ground_truth=False),
            case.spec.ground_truth,
            class_of(case),
        )
        for case in cases
        if case.spec.ground_truth is not None
    )


def select_examples(config: FewShotConfig, pool: Sequence[Example], case_id: str) -> tuple[Example, ...]:
    """The examples case ``case_id`` gets: deterministic given the seed, the case id and the pool.

    Each case draws with ``random.Random(f"{seed}:{case_id}")`` from the pool without itself.
    With ``reuse_examples`` one draw (``random.Random(str(seed))``) serves every case; a case
    that is in it gets the draw's next candidate in its own place.
    """
    if config.shots == 0:
        return ()
    if config.reuse_examples:
        rng = random.Random(str(config.seed))
        order = _shuffled(pool, rng)
        chosen = _compose(config, order, excluded=None)
        if any(example.id == case_id for example in chosen):
            others = _compose(config, order, excluded=case_id)
            taken = {example.id for example in chosen}
            extra = next(example for example in others if example.id not in taken)
            chosen = [extra if example.id == case_id else example for example in chosen]
    else:
        rng = random.Random(f"{config.seed}:{case_id}")
        chosen = _compose(config, _shuffled(pool, rng), excluded=case_id)
    if config.example_order == "as_listed":
        position = {example.id: index for index, example in enumerate(pool)}
        chosen.sort(key=lambda example: position[example.id])
    else:
        rng.shuffle(chosen)
    return tuple(chosen)


def _shuffled(pool: Sequence[Example], rng: random.Random) -> list[Example]:
    order = list(pool)
    rng.shuffle(order)
    return order


def _compose(config: FewShotConfig, order: list[Example], excluded: str | None) -> list[Example]:
    """The first candidates of ``order`` that make up the composition, ``excluded`` left out."""
    candidates = [example for example in order if example.id != excluded]
    besides = f" besides case '{excluded}'" if excluded is not None and len(candidates) < len(order) else ""
    wanted = config.shots
    if len(candidates) < wanted:
        raise FewShotError(
            f"few_shot asks for {wanted} example{'s' if wanted != 1 else ''} but the pool has "
            f"{len(candidates)}{besides} (examples are cases with a ground_truth)"
        )
    if config.compose == "random":
        return candidates[:wanted]
    by_class: dict[str, list[Example]] = {}
    for example in candidates:
        by_class.setdefault(example.label, []).append(example)
    if isinstance(config.compose, tuple):
        chosen: list[Example] = []
        for label, count in config.compose:
            found = by_class.get(label, [])
            if len(found) < count:
                raise FewShotError(
                    f"few_shot asks for {count} '{label}' example{'s' if count != 1 else ''} but the "
                    f"pool has {len(found)}{besides}; classes in the pool: {_classes(by_class)}"
                )
            chosen.extend(found[:count])
        return chosen
    return _round_robin(by_class, wanted)


def _round_robin(by_class: dict[str, list[Example]], wanted: int) -> list[Example]:
    """``wanted`` examples taken one class at a time (classes sorted), as evenly as the pool allows."""
    queues = [list(reversed(by_class[label])) for label in sorted(by_class)]
    chosen: list[Example] = []
    while len(chosen) < wanted:
        for queue in queues:
            if queue and len(chosen) < wanted:
                chosen.append(queue.pop())
    return chosen


def _classes(by_class: dict[str, list[Example]]) -> str:
    if not by_class:
        return "none"
    return ", ".join(f"'{label}' ({len(found)})" for label, found in sorted(by_class.items()))
