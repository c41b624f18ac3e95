"""The words the file format and the options accept, in one place (``typing.get_args`` gives
the tuples that messages and validation use)."""

from __future__ import annotations

from typing import Literal, get_args

PromptStyle = Literal["no_reasoning", "short_cot", "long_cot"]
EvaluatorType = Literal["code", "llm_judge", "hybrid", "manual_sme"]
Criticality = Literal["hard_gate", "threshold_gate"]
Aggregation = Literal["WEIGHTED_AVERAGE", "MINIMUM", "MAXIMUM", "MEAN"]
CacheMode = Literal["use", "off", "refresh", "replay"]
Reduce = Literal["majority", "all", "any", "mean"]
GateRule = Literal["point", "lower_bound", "corrected", "corrected_lower_bound"]
PanelRule = Literal["majority", "unanimous", "any"]  # how a panel's verdicts become one

PROMPT_STYLES: tuple[str, ...] = get_args(PromptStyle)
EVALUATOR_TYPES: tuple[str, ...] = get_args(EvaluatorType)
CRITICALITIES: tuple[str, ...] = get_args(Criticality)
AGGREGATIONS: tuple[str, ...] = get_args(Aggregation)
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
REDUCERS: tuple[str, ...] = get_args(Reduce)
GATE_RULES: tuple[str, ...] = get_args(GateRule)
PANEL_RULES: tuple[str, ...] = get_args(PanelRule)
JUDGED_TYPES = frozenset({"llm_judge", "hybrid"})  # evaluator types whose requests reach a judge
# a Python callable by import path: ``package.module:function`` (a task, a check)
IMPORT_PATH = (
    r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
)
