"""``llmjudge freeze RESULTS --out DIR``: a run's produced outputs as cases files, so that one run
of a release becomes a frozen regression set (the cases judged again without their task)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from ..suite.safe_write import write_text


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
    from ..suite.files import CODE_PATTERN
    from ..suite.text import shown

    try:
        results = load_results(args.results)
    except ResultsFileError as exc:
        return _refuse(str(exc))
    root = Path(args.rootdir or results["rootdir"])
    if not root.is_dir():
        root = Path.cwd()
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        return _refuse(f"--out {out}: not a folder")
    written = 0
    for benchmark in results["benchmarks"]:
        code = benchmark["code"]
        if not re.fullmatch(CODE_PATTERN, code):  # the results file is untrusted: "../../x" is no code
            return _refuse(f"{args.results}: benchmark code {shown(code, 60)} is not a benchmark code")
        _say_unfrozen(benchmark)
        try:
            lines = frozen_cases(benchmark, root)
        except FreezeError as exc:
            return _refuse(f"{code}: {exc}")
        if not lines:
            continue
        path = out / f"{code}.jsonl"
        text = "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)
        try:
            write_text(path, text, replace=args.force)
        except FileExistsError:
            return _refuse(f"{path} exists; pass --force to replace it")
        except OSError as exc:
            return _refuse(f"cannot write {path}: {exc.strerror or exc}")
        print(f"{path}: {len(lines)} case(s) of {code}")
        written += 1
    if not written:
        print("llmjudge freeze: the results file holds no judged outputs", file=sys.stderr)
        return 1
    return 0


def _refuse(message: str) -> int:
    print(f"llmjudge freeze: {message}", file=sys.stderr)
    return 2


def _say_unfrozen(benchmark: dict[str, Any]) -> None:
    """Name the release cases that have no output to freeze (their task errored): a frozen set
    without them must not pass for the whole benchmark."""
    from ..suite.text import shown

    missing = [c["id"] for c in benchmark["cases"] if not c["calibration"] and not c.get("produced")]
    if missing:
        ids = ", ".join(shown(i, 40).strip("'") for i in missing[:10])
        ids += f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        print(
            f"llmjudge freeze: {benchmark['code']}: {len(missing)} case(s) not frozen, the run has no "
            f"output for them (their task errored, or did not run): {ids}",
            file=sys.stderr,
        )


class FreezeError(Exception):
    """A benchmark whose cases cannot be frozen."""


def frozen_cases(benchmark: dict[str, Any], root: Path) -> list[dict[str, Any]]:
    """The benchmark's release cases as they were judged: each case's fields from its benchmark
    file (found by the case's node id) with the output the run judged."""
    from ..suite.errors import SpecError
    from ..suite.files import load_benchmark
    from ..suite.root import RootError, find_root
    from ..suite.settings import resolve
    from ..suite.text import shown

    judged = {
        case["id"]: case["produced"]["output"]
        for case in benchmark["cases"]
        if not case["calibration"] and case.get("produced")
    }
    if not judged:
        return []
    source = next(c["nodeid"] for c in benchmark["cases"] if c["id"] in judged).split("::")[0]
    try:
        # the node id comes from an untrusted results file: its benchmark file stays in the root,
        # and the files that benchmark names follow the root's own setting, as in a run
        path = Path(os.path.realpath(root / source))
        if not path.is_relative_to(os.path.realpath(root)):
            raise FreezeError(
                f"case node id names {shown(source, 200)}, outside the repository root {root}: "
                "the results file is not from this suite"
            )
        project = find_root([root])
        allow = resolve(lambda name: None, lambda name: project.ini(f"llmjudge_{name}")).allow_outside_root
        loaded = load_benchmark(path, source, root, allow_outside=allow)
    except SpecError as exc:
        raise FreezeError(exc.render()) from None
    except (RootError, ValueError) as exc:
        raise FreezeError(str(exc)) from None
    except OSError as exc:
        raise FreezeError(f"cannot read {source}: {exc}") from None
    frozen = []
    for case in loaded.cases:
        if case.id in judged:
            fields = case.spec.model_dump(mode="json", exclude_none=True)
            frozen.append({**fields, "candidate_output": judged[case.id]})
    return frozen
