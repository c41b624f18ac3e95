"""The results file (format 2): where a run's file goes, loading, validation, small accessors.

The format is the typed model ``results_model.ResultsFile``; files are validated against the JSON
Schema generated from it (shipped as ``pytest_llmjudge/schemas/results.schema.json``, whose error
messages name the place and the key meant), and ``load_results_model`` gives the typed model.
It is documented in ``docs/results.md``. jsonschema is imported only when a file is validated.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
import stat
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..suite import nesting

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from .results_model import ResultsFile

FORMAT = 2  # 2: each case says where its output came from (``produced``); format 1 is upgraded
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "results.schema.json"
RUNS_FOLDER = Path(".llmjudge") / "runs"
# A results file holds values of the suite's files (a case's output, a judge's settings), each as
# deep as a suite file may nest (``nesting.MAX_DEPTH``), under at most this many levels of its own
# (``$.benchmarks[].cases[].produced.output`` is 6): whatever a run may write, it reads back.
RESULTS_WRAPPING = 16
MAX_DEPTH = nesting.MAX_DEPTH + RESULTS_WRAPPING


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
    """Read and validate a results file; every problem is a ``ResultsFileError`` naming the file.

    The file is untrusted: a FIFO or device is refused before it is read (it could block or never
    end), and nesting deeper than ``MAX_DEPTH`` or an integer too long to convert is an error,
    never a traceback.
    """
    path = Path(path)
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsFileError(f"{path}:{error.lineno}:{error.colno}: not valid JSON: {error.msg}") from error
    except RecursionError:
        raise ResultsFileError(f"{path}: not a results file: nested too deeply") from None
    except ValueError as error:  # an integer of more digits than Python converts
        reason = str(error).split(";")[0]
        raise ResultsFileError(f"{path}: not a results file: {reason}") from None
    if _deeper_than(data, MAX_DEPTH):
        raise ResultsFileError(f"{path}: not a results file: nested deeper than {MAX_DEPTH} levels")
    validate(data, source=str(path))
    return data  # type: ignore[no-any-return]


def load_results_model(path: Path | str) -> ResultsFile:
    """``load_results`` as the typed model of the file."""
    from .results_model import ResultsFile

    return ResultsFile.model_validate(load_results(path))


def _read_text(path: Path) -> str:
    try:
        # Without O_NONBLOCK, opening a FIFO waits for a writer; the type is checked before a read.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise ResultsFileError(f"{path}: cannot read results file: not a regular file")
            with open(descriptor, "rb", closefd=False) as stream:
                raw = stream.read()
        finally:
            os.close(descriptor)
    except OSError as error:
        raise ResultsFileError(f"{path}: cannot read results file: {error.strerror or error}") from error
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ResultsFileError(f"{path}: cannot read results file: {error}") from error


def _deeper_than(data: object, limit: int) -> bool:
    """Whether ``data`` nests lists and objects more than ``limit`` levels (walked without recursion)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def upgrade(data: dict[str, Any]) -> None:
    """A format-1 file read as format 2: its cases' outputs came from the case files (``produced``
    with no task); other formats are left for ``validate`` to refuse."""
    if data.get("format") != 1:
        return
    data["format"] = FORMAT
    for benchmark in data.get("benchmarks") or ():
        for case in (benchmark.get("cases") or ()) if isinstance(benchmark, dict) else ():
            if isinstance(case, dict):
                case.setdefault("produced", None)


def validate(data: object, source: str = "results") -> None:
    """Check ``data`` against the schema, then what a schema cannot say (real dates,
    unique benchmark codes and case ids); ``source`` names it in the error message."""
    if not isinstance(data, dict):
        raise ResultsFileError(f"{source}: not a results file: the top level is not a JSON object")
    if "format" not in data:
        raise ResultsFileError(f"{source}: not a results file: no 'format' key")
    upgrade(data)
    if data["format"] != FORMAT:
        raise ResultsFileError(
            f"{source}: results format {data['format']!r} is not supported "
            f"(this version reads format {FORMAT})"
        )
    from jsonschema.exceptions import best_match

    try:
        errors = list(_validator().iter_errors(data))
    except RecursionError:
        raise ResultsFileError(f"{source}: not a results file: nested too deeply") from None
    if errors:
        error = best_match(errors)
        where = _json_path(error.absolute_path)
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise ResultsFileError(f"{source}: {where}: {_message(error)}{_hint(error)}{more}")
    problem = _beyond_schema(data)
    if problem:
        raise ResultsFileError(f"{source}: {problem}")


def _beyond_schema(data: dict[str, Any]) -> str:
    """The first problem of a schema-valid file that JSON Schema cannot express, or ""."""
    for key in ("started", "finished"):
        try:
            datetime.fromisoformat(data[key])
        except ValueError as error:
            return f"$.{key}: {data[key]!r} is not a real date and time ({error})"
    codes: set[str] = set()
    for index, benchmark in enumerate(data["benchmarks"]):
        if benchmark["code"] in codes:
            return f"$.benchmarks[{index}].code: duplicate benchmark code {benchmark['code']!r}"
        codes.add(benchmark["code"])
        # calibration cases are a set of their own: one may share its id with a release case
        seen: set[tuple[bool, str]] = set()
        for number, case in enumerate(benchmark["cases"]):
            pair = (bool(case["calibration"]), str(case["id"]))
            if pair in seen:
                kind = "calibration case" if case["calibration"] else "case"
                return f"$.benchmarks[{index}].cases[{number}].id: duplicate {kind} id {case['id']!r}"
            seen.add(pair)
    return ""


def _json_path(parts: Iterable[str | int]) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _message(error: ValidationError) -> str:
    if isinstance(error.instance, float) and math.isnan(error.instance):
        return "NaN is not a number (this value is bounded)"  # the schema's ``not_nan``
    return error.message


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
    """``(benchmark code, case id) → result`` for every release case of the run (a calibration
    case's result is agreement with its label, and its id may be a release case's too)."""
    return {
        (b["code"], c["id"]): c["result"]
        for b in results["benchmarks"]
        for c in b["cases"]
        if not c["calibration"]
    }


def disagrees(case: dict[str, Any]) -> bool:
    """The judge's verdict differs from the case's human label (errors and skips have no verdict).

    A calibration case's ``result`` already says it: ``pass`` when the judge agreed with the label.
    """
    result = case["result"]
    if case["label"] is None or result not in ("pass", "fail"):
        return False
    if case["calibration"]:
        return bool(result == "fail")
    return bool(result != case["label"])
