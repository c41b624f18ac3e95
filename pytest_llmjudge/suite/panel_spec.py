"""A panel of judges as configured: its members, the rule that turns their verdicts into one, and
how many must answer (``judge: {panel: [...], panel_rule, min_members}`` in a benchmark file, or
``--llmjudge-panel`` / ``--llmjudge-panel-rule`` for the run).

A member is a model string, as ``judge.model`` takes, optionally with its own base URL: in a file
``{model: M, base_url: URL}``, on the command line ``M@URL``. A member without one uses the
benchmark's ``judge.base_url``, else the run's ``--llmjudge-base-url``, as a single judge does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import Location, SpecError

MEMBER_URL_SEPARATOR = "@"  # ``--llmjudge-panel openai:judge@http://host/v1``: a member's own server


@dataclass(frozen=True)
class PanelMember:
    """One judge of a panel: a model string and, if it has one, its own base URL."""

    model: str
    base_url: str | None = None

    @property
    def label(self) -> str:
        """How reports name the member: its model, with its own server when it has one."""
        return f"{self.model}{MEMBER_URL_SEPARATOR}{self.base_url}" if self.base_url else self.model


@dataclass(frozen=True)
class Panel:
    """A benchmark's panel: its members, rule (majority, unanimous, any) and the least number of
    members that must answer a case for the panel to decide it."""

    members: tuple[PanelMember, ...]
    rule: str = "majority"
    min_members: int = 2

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(member.label for member in self.members)


def default_min_members(size: int) -> int:
    """A majority of the panel: 2 of 3, 3 of 4."""
    return size // 2 + 1


def parse_member(text: str) -> PanelMember:
    """``MODEL`` or ``MODEL@URL`` (the run's option form); raises ``ValueError`` for an empty part."""
    model, separator, url = text.strip().partition(MEMBER_URL_SEPARATOR)
    model, url = model.strip(), url.strip()
    if not model or (separator and not url):
        raise ValueError(f"{text.strip()!r} is not a panel member 'MODEL' or 'MODEL@BASE_URL'")
    return PanelMember(model, url or None)


def parse_members(items: Sequence[str]) -> tuple[PanelMember, ...]:
    return tuple(parse_member(item) for item in items)


def panel_problem(members: Sequence[PanelMember]) -> str | None:
    """What makes ``members`` no panel (fewer than two, one named twice), or None."""
    if len(members) < 2:
        return f"a panel needs at least 2 judges, got {len(members)}"
    seen: set[PanelMember] = set()
    for member in members:
        if member in seen:
            return f"{member.label} is named twice (its verdicts would count twice)"
        seen.add(member)
    return None


def spec_members(items: Sequence[Any]) -> tuple[PanelMember, ...]:
    return tuple(
        PanelMember(item) if isinstance(item, str) else PanelMember(item.model, item.base_url)
        for item in items
    )


def check_panel(judge: Any, where: Callable[[tuple[str | int, ...]], Location]) -> None:
    """A benchmark file's panel (``judge``: its ``JudgeSettings``) is usable: two judges or more,
    each once, min_members within it, and not beside ``judge.model``;
    ``where`` gives the line of a key path."""
    if judge is None or judge.panel is None:
        return
    members = spec_members(judge.panel)
    if (problem := panel_problem(members)) is not None:
        index = len(members) - 1 if len(members) >= 2 else None
        key: tuple[str | int, ...] = ("judge", "panel", index) if index is not None else ("judge", "panel")
        raise SpecError(where(key), "judge.panel", problem, "list each judge once, two or more")
    if judge.model:
        raise SpecError(
            where(("judge", "model")),
            "judge.model",
            "a benchmark has one judge ('model') or a panel ('panel'), not both",
            "remove 'model:', or 'panel:'",
        )
    if judge.min_members is not None and judge.min_members > len(members):
        raise SpecError(
            where(("judge", "min_members")),
            "judge.min_members",
            f"{judge.min_members} judges must answer, but the panel has {len(members)}",
            f"use a number from 1 to {len(members)} "
            f"(default: a majority, {default_min_members(len(members))})",
        )
