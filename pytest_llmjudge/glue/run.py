"""The facts of one pytest session that the run's plugins share (``host`` registers them): each
field is written by the plugin that owns it, and read by the others."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..suite.settings import RunSettings

if TYPE_CHECKING:
    from ..gating.records import CaseRecord
    from ..gating.run_verdict import RunGates, RunVerdict
    from .rubric_files import RubricFiles


@dataclass(eq=False)
class Run:
    """What one session found: written by the plugin that owns each field, read by the others."""

    config: pytest.Config
    settings: RunSettings
    # collection
    codes: dict[str, str] = field(default_factory=dict)  # benchmark code -> where it is defined
    parent_rubrics: dict[str, tuple[str, Any]] = field(default_factory=dict)  # code -> (rubric, where)
    benchmark_files: set[str] = field(default_factory=set)
    named_files: dict[str, dict[Path, str]] = field(default_factory=dict)  # file -> what it names
    collect_failures: set[str] = field(default_factory=set)
    # judging
    records: list[CaseRecord] = field(default_factory=list)
    failed_nodeids: set[str] = field(default_factory=set)
    snapshot_failures: set[str] = field(default_factory=set)  # ``::prompt`` items that failed
    # gating
    gates: RunGates | None = None
    verdict: RunVerdict | None = None
    rubrics: RubricFiles | None = None
    session: pytest.Session | None = None
    frozen: bool = False
    gc_paused: bool = False  # the cyclic collector off while the suite is collected (gcfreeze)
