"""``llmjudge schema``: JSON Schemas of the file formats, for editors.

The benchmark, cases and prompt-template schemas are generated from the pydantic models that
the loader validates files with, so an editor and a pytest run accept the same keys and values.
The results schema is generated from the results file's typed model
(``reporting.results_model``), and the reader validates files with its shipped copy. Each ships in the
package (``pytest_llmjudge/schemas/<kind>.schema.json``); a test keeps those files equal to what
is generated here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
KINDS = ("benchmark", "cases", "prompt-template", "results")
DRAFT = "https://json-schema.org/draft/2020-12/schema"
_TITLES = {
    "benchmark": (
        "pytest-llmjudge benchmark file",
        "One benchmark: its rubric, gate, judge settings and cases (README 'Benchmark files').",
    ),
    "cases": (
        "pytest-llmjudge cases file",
        "The cases a benchmark's 'cases_file' or 'calibration_file' names: a list of cases, "
        "or a mapping with a 'cases' list.",
    ),
    "prompt-template": (
        "pytest-llmjudge prompt-template file",
        "The prompt of a model task: 'prompt: {template: ...}' (one user message) or "
        "'prompt: {messages: [{role, content}]}' (a conversation), with template_variables, "
        "metadata, client_parameters and custom_data under 'prompt:' or beside it; templates are jinja2.",
    ),
}


def shipped_path(kind: str) -> Path:
    """Where the package ships the schema of ``kind``."""
    return SCHEMA_DIR / f"{kind}.schema.json"


def generate(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``kind`` (one of ``KINDS``), built from the loader's own models."""
    if kind == "results":
        from ..reporting.results_model import results_schema

        return results_schema()
    title, description = _TITLES[kind]
    header = {"$schema": DRAFT, "title": title, "description": description}
    body = _standard_bounds(_body(kind))
    return {**header, **{k: v for k, v in body.items() if k not in header}}


def _body(kind: str) -> dict[str, Any]:
    from pydantic import TypeAdapter

    from ..suite.files import BenchmarkSpec, CaseSpec

    if kind == "benchmark":
        return BenchmarkSpec.model_json_schema()
    if kind == "cases":
        body = TypeAdapter(list[CaseSpec]).json_schema()
        cases = {k: v for k, v in body.items() if k != "$defs"}
        wrapped = {
            "type": "object",
            "properties": {"cases": cases},
            "required": ["cases"],  # other keys beside 'cases' are ignored, as the loader does
        }
        return {"$defs": body["$defs"], "anyOf": [cases, wrapped]}
    # the loader tells the layouts apart by their keys; each forbids the others'
    from ..tasks.prompt_template import FileFormat

    return TypeAdapter(FileFormat).json_schema()


_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _standard_bounds(node: Any) -> Any:
    """``ge``/``le`` as JSON Schema's ``minimum``/``maximum``.

    pydantic leaves a number's ``Field(ge=..., le=...)`` under its own names when the type also
    has a ``BeforeValidator`` (``Fraction``), and editors ignore those names.
    """
    if isinstance(node, list):
        return [_standard_bounds(item) for item in node]
    if not isinstance(node, dict):
        return node
    numeric = node.get("type") in ("number", "integer")  # a tuple: a property may be named "type"
    return {(_BOUNDS.get(k, k) if numeric else k): _standard_bounds(v) for k, v in node.items()}


def schema_text(kind: str) -> str:
    """The schema of ``kind`` as the shipped file holds it."""
    return json.dumps(generate(kind), indent=2, ensure_ascii=False) + "\n"


def _schema(args: argparse.Namespace) -> int:
    if args.path:
        print(shipped_path(args.kind))
    else:
        print(schema_text(args.kind), end="")
    return 0


def add_schema_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "schema",
        help="print the JSON Schema of a file format, for editors",
        description="Print the JSON Schema of a benchmark file, a cases file, a prompt-template file "
        "or a results file. Editors that use yaml-language-server (VS Code's YAML extension, Neovim, "
        "Helix) validate and complete a YAML file whose first line is "
        "'# yaml-language-server: $schema=PATH'.",
    )
    parser.add_argument("kind", nargs="?", choices=KINDS, default="benchmark", help="default: benchmark")
    parser.add_argument(
        "--path", action="store_true", help="print where the package ships the schema instead of the schema"
    )
    parser.set_defaults(handler=_schema)
