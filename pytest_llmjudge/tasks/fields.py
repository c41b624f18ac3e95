"""The fields of a case that a task sees: what its prompt templates may name."""

from __future__ import annotations

from typing import Any

from ..suite.files import Case

# Always the case's own values: a key of ``inputs`` with one of these names stays under ``inputs``.
RESERVED = frozenset({"id", "benchmark", "source_narrative", "inputs", "metadata", "ground_truth"})


def case_fields(benchmark_code: str, case: Case, sees_ground_truth: bool) -> dict[str, Any]:
    """``id``, ``benchmark``, ``source_narrative``, ``inputs`` (and each input at top level),
    ``metadata``, and ``ground_truth`` only when the task ``sees_ground_truth``."""
    spec = case.spec
    inputs = dict(spec.inputs or {})
    fields: dict[str, Any] = {key: value for key, value in inputs.items() if key not in RESERVED}
    fields.update(id=spec.id, benchmark=benchmark_code, inputs=inputs)
    if spec.source_narrative is not None:
        fields["source_narrative"] = spec.source_narrative
    if spec.metadata is not None:
        fields["metadata"] = dict(spec.metadata)
    if sees_ground_truth and spec.ground_truth is not None:
        fields["ground_truth"] = spec.ground_truth
    return fields
