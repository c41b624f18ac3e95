"""``llmjudge merge R1.json R2.json … -o ALL.json``: the results files of a suite's shards as one
run's, gated again as that run would be; its exit status is that run's, so the merge step is the
release gate of a sharded CI run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_USAGE = 2


def add_merge_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "merge",
        help="merge the results files of a suite's shards and gate them as one run",
        description="Merge the results files of shards of one suite (CI matrix jobs, -k slices): the "
        "same settings and judges, each case in one shard. The gates, intervals, calibration, "
        "baseline comparison and exit reasons are decided again as one run of every case would "
        "decide them, and the command exits with that run's status.",
    )
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="a shard's results file")
    parser.add_argument(
        "-o", "--output", type=Path, required=True, metavar="PATH", help="merged results file"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="PATH",
        help="the baseline results file, if the shards' --llmjudge-baseline path does not hold here",
    )
    parser.set_defaults(handler=_merge)


def _merge(args: argparse.Namespace) -> int:
    from ..reporting.results_file import ResultsFileError
    from ..reporting.results_merge import MergeError

    try:
        return _run(args)
    except (ResultsFileError, MergeError) as error:
        print(f"llmjudge merge: {error}", file=sys.stderr)
        return EXIT_USAGE


def _run(args: argparse.Namespace) -> int:
    from ..gating.calibration_run import CALIBRATION_FOLDER, calibrate
    from ..reporting.results_merge import check_shards, merged_records, merged_results, merged_verdict
    from ..reporting.results_writer import write_results

    shards = [_shard(path) for path in args.results]
    check_shards(shards)
    records = merged_records(shards)
    baseline, baseline_error = _baseline(args, shards[0].results.settings)
    folder = Path(CALIBRATION_FOLDER)
    calibrations = calibrate(records, folder if folder.is_dir() else None)
    verdict = merged_verdict(
        records, shards, baseline=baseline, baseline_error=baseline_error, calibrations=calibrations
    )
    command = ["llmjudge", "merge", *map(str, args.results), "-o", str(args.output)]
    data = merged_results(shards, records, verdict, command)
    try:
        write_results(data, args.output, overwrite=True, guard=_guard(args))
    except OSError as error:
        print(f"llmjudge merge: cannot write {args.output}: {error}", file=sys.stderr)
        return EXIT_USAGE
    _report(data, len(shards), args.output)
    return verdict.status


def _guard(args: argparse.Namespace) -> Any:
    """The merged file never replaces a shard's."""
    from ..suite.safe_write import Guard

    return Guard({path.resolve(): "a results file being merged" for path in args.results})


def _shard(path: Path) -> Any:
    from ..reporting.results_file import load_results
    from ..reporting.results_merge import Shard
    from ..reporting.results_model import ResultsFile

    raw = load_results(path)
    return Shard(str(path), ResultsFile.model_validate(raw), raw)


def _baseline(args: argparse.Namespace, settings: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The baseline the shards compared with, read as a run reads it: a file that cannot be read
    is an error, except under ``fail_on: regression``, where every gate fails instead."""
    from ..reporting.results_file import ResultsFileError, load_results

    chosen = args.baseline or (Path(settings.baseline) if settings.baseline else None)
    if chosen is None:
        return None, None
    try:
        return load_results(chosen), None
    except ResultsFileError as error:
        if settings.fail_on != "regression":
            raise
        return None, f"--llmjudge-baseline: {error}"


def _report(data: dict[str, Any], shards: int, output: Path) -> None:
    totals = data["totals"]
    print(
        f"merged {shards} results files: {totals['cases']} cases, {totals['passed']} passed, "
        f"{totals['failed']} failed, {totals['errors']} errors"
    )
    for benchmark in data["benchmarks"]:
        gate = benchmark["gate"]
        detail = f": {gate['detail']}" if gate["detail"] else ""
        print(f"  gate {benchmark['code']}: {gate['status']}{detail}")
    print(f"exit status {data['exit_status']}: {'; '.join(data['exit_reasons'])}")
    print(f"results file: {output}")
