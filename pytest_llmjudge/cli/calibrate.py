"""``llmjudge calibrate PATH``: judge only the human-labelled cases and say whether each
benchmark's judge meets its minimums.

It runs pytest on PATH with ``-k llmjudge_labelled`` (the keyword every labelled case and
calibration item carries), so the judge, cache and settings are exactly a run's, then reads the
calibration of each benchmark back from the run's results file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

LABELLED_KEYWORD = "llmjudge_labelled"


def add_calibrate_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``calibrate`` to the ``llmjudge`` command."""
    parser = commands.add_parser(
        "calibrate",
        help="judge the human-labelled cases and report the judge's agreement",
        description="Judge only the cases with a human label (and calibration files) under PATH, then "
        "print agreement per benchmark, the disagreements with the judge's reasons, and whether each "
        "judge meets its min_tpr / min_tnr / min_labels. Exit 1 when one does not.",
    )
    parser.add_argument("path", help="benchmark file or folder")
    parser.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        help="further pytest options, e.g. --llmjudge-model local (after --)",
    )
    parser.set_defaults(handler=calibrate)


def calibrate(args: argparse.Namespace) -> int:
    extra = [a for a in args.pytest_args if a != "--"]
    given = results_option(extra)
    with tempfile.TemporaryDirectory(prefix="llmjudge-calibrate-") as folder:
        results = Path(given) if given else Path(folder) / "results.json"
        command = [sys.executable, "-m", "pytest", args.path, "-k", LABELLED_KEYWORD, "-q", "--color=no"]
        command += ["-p", "no:syrupy", *([] if given else [f"--llmjudge-results={results}"]), *extra]
        before = _stamp(results)
        run = subprocess.run(command, capture_output=True, text=True, check=False)
        written = results.is_file() and _stamp(results) != before  # not a file an earlier run left
        data = json.loads(results.read_text(encoding="utf-8")) if written else None
    if data is None:
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        why = f"wrote no results file at {given}" if given else f"judged no labelled case under {args.path}"
        print(f"llmjudge calibrate: pytest {why}", file=sys.stderr)
        return 2
    lines, trusted = report(data)
    print("\n".join(lines))
    if given:
        print(f"results file: {given} (compare two with: llmjudge compare OLD NEW)")
    return 0 if trusted else 1


def results_option(pytest_args: list[str]) -> str | None:
    """The ``--llmjudge-results`` path among the pytest options, if given (the last one wins)."""
    path = None
    for index, arg in enumerate(pytest_args):
        if arg.startswith("--llmjudge-results="):
            path = arg.partition("=")[2]
        elif arg == "--llmjudge-results" and index + 1 < len(pytest_args):
            path = pytest_args[index + 1]
    return path


def _stamp(path: Path) -> tuple[int, int] | None:
    """When ``path`` was last written and its size; None when there is no file."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _interval(value: list[float] | None) -> str:
    return "" if value is None else f" [{value[0]:.2f}, {value[1]:.2f}]"


def report(data: dict[str, Any]) -> tuple[list[str], bool]:
    """The agreement table, the disagreements and the verdict per benchmark, from a results file."""
    from ..reporting.summary import shorten

    header = ("benchmark", "labels", "TPR [CI]", "TNR [CI]", "bal. acc.", "kappa", "trusted")
    rows, verdicts, disagreements = [header], [], []
    all_trusted = True
    for benchmark in data["benchmarks"]:
        calibration = benchmark.get("calibration")
        if calibration is None:
            continue
        trusted = calibration["trusted"]
        rows.append(
            (
                benchmark["code"],
                str(calibration["n_labels"]),
                _rate(calibration["tpr"]) + _interval(calibration["tpr_ci"]),
                _rate(calibration["tnr"]) + _interval(calibration["tnr_ci"]),
                _rate(calibration["balanced_accuracy"]),
                _rate(calibration["kappa"]),
                {None: "-", True: "yes", False: "no"}[trusted],
            )
        )
        if trusted is False:
            all_trusted = False
            verdicts.append(f"{benchmark['code']}: below its minimums: {calibration['detail']}")
        elif trusted:
            verdicts.append(f"{benchmark['code']}: meets its minimums: {calibration['detail']}")
        else:
            verdicts.append(f"{benchmark['code']}: no minimums set (judge.min_tpr, min_tnr, min_labels)")
        for case in benchmark["cases"]:
            label, result = case["label"], case["result"]
            if label is None or result not in ("pass", "fail"):
                continue
            judge = result if not case["calibration"] else label if result == "pass" else _other(label)
            if judge != label:
                where = case["location"]
                disagreements.append(
                    f"  {benchmark['code']}::{case['id']} at {where}: human {label}, "
                    f"judge {judge}: {shorten(case['reason'])}"  # whole in the results file
                )
    if len(rows) == 1:
        return ["no labelled case was judged (add 'label: pass|fail' to cases, or a calibration_file)"], False
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if disagreements:
        lines += ["", f"judge and human disagree ({len(disagreements)}):", *disagreements]
    lines += ["", *verdicts]
    return lines, all_trusted


def _other(label: str) -> str:
    return "fail" if label == "pass" else "pass"
