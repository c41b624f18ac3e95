"""Deterministic checks for ``code`` and ``hybrid`` benchmarks, run with pydantic-evals' evaluators."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

from pydantic_evals.evaluators import (
    Contains,
    Equals,
    EqualsExpected,
    EvaluationReason,
    Evaluator,
    IsInstance,
)
from pydantic_evals.evaluators.context import EvaluatorContext

from ..suite.files import Benchmark, Case, CheckSpec
from .evals_adapter import span_tree_unavailable
from .verdict import JudgeFailure, Outcome, Verdict


class CheckedCase(Protocol):
    """A case whose benchmark's checks can run (``pipeline.host.JudgedCase`` is one)."""

    @property
    def case(self) -> Case: ...
    @property
    def benchmark(self) -> Benchmark: ...


class CheckConfigError(Exception):
    """A check that cannot run as configured (e.g. its import path is wrong)."""


def _evaluator(check: CheckSpec) -> Evaluator[Any, Any, Any] | Callable[[Any], Any]:
    if check.type == "contains":
        return Contains(value=check.value, case_sensitive=check.case_sensitive)
    if check.type == "equals":
        return Equals(value=check.value)
    if check.type == "equals_expected":
        return EqualsExpected()
    if check.type == "is_instance":
        return IsInstance(type_name=str(check.value))
    module_name, _, attr = (check.function or "").partition(":")
    try:
        function = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise CheckConfigError(f"python check '{check.function}' cannot be imported: {exc}") from None
    if not callable(function):
        raise CheckConfigError(f"python check '{check.function}' is not callable")
    return function  # type: ignore[no-any-return]


def _context(case: Case) -> EvaluatorContext[Any, Any, Any]:
    spec = case.spec
    return EvaluatorContext(
        name=case.id,
        inputs={"source_narrative": spec.source_narrative, **(spec.inputs or {})},
        metadata=spec.metadata,
        expected_output=spec.ground_truth,
        output=spec.candidate_output,
        duration=0.0,
        _span_tree=span_tree_unavailable("deterministic check: no spans recorded"),
        attributes={},
        metrics={},
    )


def _passed(result: Any) -> tuple[bool, str]:
    if isinstance(result, EvaluationReason):
        return bool(result.value), result.reason or ""
    if isinstance(result, dict):
        values = [_passed(v)[0] for v in result.values()]
        return all(values), ""
    if isinstance(result, tuple) and len(result) == 2:
        return bool(result[0]), str(result[1])
    return bool(result), ""


def run_checks(case: Case, checks: list[CheckSpec]) -> Verdict:
    """Run every check; the verdict fails on the first failing one and names it."""
    ctx = _context(case)
    for index, check in enumerate(checks, start=1):
        evaluator = _evaluator(check)
        result = evaluator.evaluate_sync(ctx) if isinstance(evaluator, Evaluator) else evaluator(ctx)
        ok, why = _passed(result)
        if not ok:
            label = check.function or (
                f"{check.type}({check.value!r})" if check.value is not None else check.type
            )
            return Verdict(False, f"check {index} {label} failed" + (f": {why}" if why else ""), 0.0)
    return Verdict(True, f"all {len(checks)} deterministic check(s) passed", 1.0)


def checked_outcome(case: CheckedCase) -> Outcome:
    """The deterministic checks of a ``code`` or ``hybrid`` case as its outcome; a broken check
    errors its case, not the run."""
    try:
        verdict = run_checks(case.case, list(case.benchmark.spec.checks or ()))
    except CheckConfigError as exc:
        return Outcome(None, JudgeFailure("check-config", str(exc)), "checks")
    except Exception as exc:  # a check function that raises errors its case, not the run
        return Outcome(None, JudgeFailure("check-error", f"{type(exc).__name__}: {exc}"), "checks")
    return Outcome(verdict, None, "checks")
