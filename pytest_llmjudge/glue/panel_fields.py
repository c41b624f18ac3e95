"""The panel part of a case record: each member's verdict and the panel's decision."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..gating.panel_records import PanelRecord
    from ..judging.verdict import Outcome
    from .nodes import CaseItem


def panel_field(item: CaseItem, outcome: Outcome | None) -> PanelRecord | None:
    """The record's ``panel`` when a panel judged ``item``'s case; None otherwise."""
    if outcome is None or not outcome.members:
        return None
    from ..gating.panel_records import panel_record
    from ..suite.settings import panel_for
    from .stash import run_host

    panel = panel_for(item.benchmark, run_host(item.config).settings)
    if panel is None:
        return None
    return panel_record(outcome, panel.rule, panel.min_members)
