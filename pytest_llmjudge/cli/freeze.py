"""``llmjudge freeze RESULTS --out DIR``: a run's produced outputs as cases files, so that one run
of a release becomes a frozen regression set (the cases judged again without their task)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_freeze_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``freeze`` to the ``llmjudge`` command."""
    parser = commands.add_parser(
        "freeze",
        help="write a run's produced outputs as cases files (a frozen regression set)",
        description="For each benchmark of the results file, write DIR/<CODE>.jsonl: every release "
        "case of the benchmark file with the candidate_output the run judged (produced by its task, "
        "or stored), under the same id. Point the benchmark's cases_file at it to judge the frozen "
        "outputs with no task call. Existing files are refused unless --force.",
    )
    parser.add_argument("results", help="results file of the run (--llmjudge-results)")
    parser.add_argument("--out", required=True, help="folder for the cases files")
    parser.add_argument("--rootdir", help="repository root of the benchmark files (default: the run's)")
    parser.add_argument("--force", action="store_true", help="replace cases files that exist")
    parser.set_defaults(handler=freeze)


def freeze(args: argparse.Namespace) -> int:
    from ..reporting.results_file import ResultsFileError, load_results

    try:
        results = load_results(args.results)
    except ResultsFileError as exc:
        print(f"llmjudge freeze: {exc}", file=sys.stderr)
        return 2
    root = Path(args.rootdir or results["rootdir"])
    if not root.is_dir():
        root = Path.cwd()
    out = Path(args.out)
    written = 0
    for benchmark in results["benchmarks"]:
        try:
            lines = frozen_cases(benchmark, root)
        except FreezeError as exc:
            print(f"llmjudge freeze: {benchmark['code']}: {exc}", file=sys.stderr)
            return 2
        if not lines:
            continue
        path = out / f"{benchmark['code']}.jsonl"
        if path.exists() and not args.force:
            print(f"llmjudge freeze: {path} exists; pass --force to replace it", file=sys.stderr)
            return 2
        out.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines), "utf-8")
        temporary.replace(path)
        print(f"{path}: {len(lines)} case(s) of {benchmark['code']}")
        written += 1
    if not written:
        print("llmjudge freeze: the results file holds no judged outputs", file=sys.stderr)
        return 1
    return 0


class FreezeError(Exception):
    """A benchmark whose cases cannot be frozen."""


def frozen_cases(benchmark: dict[str, Any], root: Path) -> list[dict[str, Any]]:
    """The benchmark's release cases as they were judged: each case's fields from its benchmark
    file (found by the case's node id) with the output the run judged."""
    from ..suite.errors import SpecError
    from ..suite.files import load_benchmark

    judged = {
        case["id"]: case["produced"]["output"]
        for case in benchmark["cases"]
        if not case["calibration"] and case.get("produced")
    }
    if not judged:
        return []
    source = next(c["nodeid"] for c in benchmark["cases"] if c["id"] in judged).split("::")[0]
    try:
        loaded = load_benchmark(root / source, source, root, allow_outside=True)
    except SpecError as exc:
        raise FreezeError(exc.render()) from None
    except OSError as exc:
        raise FreezeError(f"cannot read {source}: {exc}") from None
    frozen = []
    for case in loaded.cases:
        if case.id in judged:
            fields = case.spec.model_dump(mode="json", exclude_none=True)
            frozen.append({**fields, "candidate_output": judged[case.id]})
    return frozen
