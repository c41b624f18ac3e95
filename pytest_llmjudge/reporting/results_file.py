"""The results file (format 1): where a run's file goes, loading, validation, small accessors.

The format is defined by ``results.schema.json`` beside this module and documented in
``docs/results.md``. jsonschema is imported only when a file is validated.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

FORMAT = 1
SCHEMA_PATH = Path(__file__).with_name("results.schema.json")
RUNS_FOLDER = Path(".llmjudge") / "runs"


class ResultsFileError(Exception):
    """A results file that cannot be read, is of another format, or breaks the schema."""


def default_results_path(root: Path, started: datetime, suite_digest: str) -> Path:
    """``root/.llmjudge/runs/<UTC start>-<digest[:12]>.json``, with ``-2``, ``-3``… if taken.

    A naive ``started`` is taken as UTC. Nothing is created: the writer makes the folder.
    """
    utc = started.replace(tzinfo=UTC) if started.tzinfo is None else started.astimezone(UTC)
    stem = f"{utc:%Y%m%dT%H%M%SZ}-{suite_digest[:12]}"
    folder = root / RUNS_FOLDER
    path = folder / f"{stem}.json"
    number = 2
    while path.exists():
        path = folder / f"{stem}-{number}.json"
        number += 1
    return path


def load_results(path: Path | str) -> dict[str, Any]:
    """Read and validate a results file; every problem is a ``ResultsFileError`` naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ResultsFileError(f"{path}: cannot read results file: {error}") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsFileError(f"{path}:{error.lineno}:{error.colno}: not valid JSON: {error.msg}") from error
    validate(data, source=str(path))
    return data  # type: ignore[no-any-return]


def validate(data: object, source: str = "results") -> None:
    """Check ``data`` against the format-1 schema; ``source`` names it in the error message."""
    if not isinstance(data, dict):
        raise ResultsFileError(f"{source}: not a results file: the top level is not a JSON object")
    if "format" not in data:
        raise ResultsFileError(f"{source}: not a results file: no 'format' key")
    if data["format"] != FORMAT:
        raise ResultsFileError(
            f"{source}: results format {data['format']!r} is not supported "
            f"(this version reads format {FORMAT})"
        )
    from jsonschema.exceptions import best_match

    errors = list(_validator().iter_errors(data))
    if not errors:
        return
    error = best_match(errors)
    where = _json_path(error.absolute_path)
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    raise ResultsFileError(f"{source}: {where}: {error.message}{_hint(error)}{more}")


def _json_path(parts: Iterable[str | int]) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _hint(error: ValidationError) -> str:
    """For a misspelt key, the closest key the schema allows."""
    schema = error.schema
    if error.validator != "additionalProperties" or not isinstance(schema, dict):
        return ""
    if not isinstance(error.instance, dict):
        return ""
    allowed = list(schema.get("properties", {}))
    hints = []
    for key in error.instance:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            if close:
                hints.append(f"{key!r} → {close[0]!r}")
    return f"; did you mean {', '.join(hints)}?" if hints else ""


@functools.cache
def _validator() -> Validator:
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def judge_models(results: dict[str, Any]) -> list[str]:
    """The judge models the run's benchmarks used, in first-seen order."""
    models: dict[str, None] = {}
    for benchmark in results["benchmarks"]:
        if benchmark["judge"] is not None:
            models[benchmark["judge"]["model"]] = None
    return list(models)


def case_results(results: dict[str, Any]) -> dict[tuple[str, str], str]:
    """``(benchmark code, case id) → result`` for every case of the run."""
    return {(b["code"], c["id"]): c["result"] for b in results["benchmarks"] for c in b["cases"]}


def disagrees(case: dict[str, Any]) -> bool:
    """The judge's verdict differs from the case's human label (errors and skips have no verdict)."""
    verdict = case["result"]
    return case["label"] is not None and verdict in ("pass", "fail") and verdict != case["label"]
