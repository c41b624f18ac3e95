"""``llmjudge runs``, ``show``, ``compare`` and ``report``: results files read offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..reporting.results_file import RUNS_FOLDER, ResultsFileError, load_results

REGRESSION = 1


def _load(path: str) -> dict[str, Any] | None:
    try:
        return load_results(path)
    except ResultsFileError as error:
        print(error, file=sys.stderr)
        return None


def _run_order(path: Path) -> tuple[str, int]:
    """Start time, then the ``-2``, ``-3`` a name gets when two runs start in the same second."""
    stem, _, number = path.stem.rpartition("-")
    if stem.count("-") >= 1 and number.isascii() and number.isdigit():  # <time>-<digest>-<n>
        return stem, int(number)
    return path.stem, 1


def project_root(rootdir: str | None) -> Path | None:
    """``--rootdir``, else the rootdir pytest would use when run here (found from a subfolder as
    well); None, said on stderr, when a configuration file pytest would refuse is in the way."""
    from ..suite.root import RootError, find_root

    if rootdir is not None:
        return Path(rootdir)
    try:
        return find_root([]).rootdir
    except RootError as exc:
        print(f"llmjudge: {exc}", file=sys.stderr)
        return None


def _newest(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"), key=_run_order, reverse=True) if folder.is_dir() else []


def _runs(args: argparse.Namespace) -> int:
    """List the results files of a repository, newest first."""
    root = project_root(args.rootdir)
    if root is None:
        return 2
    folder = root / RUNS_FOLDER
    paths = _newest(folder)
    if not paths:
        print(f"no results files in {folder}")
        return 0
    header = (
        f"{'started':<25} {'suite':<12} {'cases':>5} {'passed':>6} {'failed':>6} {'gates':<5} {'exit':>4}"
    )
    print(f"{header}  file")
    for path in paths:
        try:
            data = load_results(path)
        except ResultsFileError as error:
            print(f"{'?':<25} {'':<12} {'':>5} {'':>6} {'':>6} {'':<5} {'':>4}  {path.name} ({error})")
            continue
        totals = data["totals"]
        gates = "fail" if any(b["gate"]["status"] == "fail" for b in data["benchmarks"]) else "pass"
        print(
            f"{data['started']:<25} {data['suite_digest'][:12]:<12} {totals['cases']:>5} "
            f"{totals['passed']:>6} {totals['failed']:>6} {gates:<5} {data['exit_status']:>4}  {path.name}"
        )
    return 0


def summary_lines(data: dict[str, Any]) -> list[str]:
    """A results file's summary: the run, every gate with its interval, flaky cases, comparison."""
    from ..reporting.run_summary import comparison_table, interval_line
    from ..reporting.summary import exit_lines, results_gate_lines

    totals = data["totals"]
    lines = [
        f"run started {data['started']}, finished {data['finished']}, exit status {data['exit_status']}",
        f"suite {data['suite_digest'][:12]}, commit {data['commit'] or '-'}, plugin {data['plugin_version']}",
        f"command: {' '.join(data['command'])}",
        f"{totals['cases']} case(s): {totals['passed']} passed, {totals['failed']} failed, "
        f"{totals['errors']} error(s), {totals['skipped']} skipped, {totals['flaky']} flaky; "
        f"{totals['calls']} model call(s), {totals['cache_hits']} cache hit(s)",
        "",
        *results_gate_lines(data),  # the terminal's tables: benchmarks and rubrics
    ]
    lines += ["", "pass rates with 95% intervals:"]
    for b in data["benchmarks"]:
        gate = b["gate"]
        # the gate's rate and interval are over case verdicts; calibration cases are not gated
        judged = [c for c in b["cases"] if c["result"] in ("pass", "fail") and not c["calibration"]]
        samples = sum(len(c["samples"]) or 1 for c in judged)
        lines.append(
            interval_line(
                b["code"],
                gate["pass_rate"],
                gate["ci_low"],
                gate["ci_high"],
                len(judged),
                b["gate_rule"],
                samples,
            )
        )
    flaky = [(b["code"], c) for b in data["benchmarks"] for c in b["cases"] if c["flaky"]]
    if flaky:
        lines += ["", f"flaky cases ({len(flaky)}: repeated judge samples disagree):"]
        for code, case in flaky:
            passes = sum(1 for s in case["samples"] if s["pass"])
            lines.append(f"  {code}::{case['id']}: {passes} of {len(case['samples'])} samples pass")
    if data["comparison"] is not None:
        lines += ["", *comparison_table(data["comparison"])]
    if any(b.get("pairwise") for b in data["benchmarks"]):
        from ..reporting.pairwise import figures_of_results, pairwise_table

        settings = data["settings"]
        figures = figures_of_results(data, margin=settings["margin"], alpha=settings["alpha"])
        lines += ["", *pairwise_table(figures)]
    return [*lines, "", *exit_lines(data["exit_status"], data["exit_reasons"])]


def _results_path(given: str | None) -> str | None:
    """The results file ``show`` reads: the one given, found from here or else from the project
    root (the summary prints paths from the root); with none given, the project's newest run."""
    if given is not None and Path(given).exists():
        return given
    root = project_root(None)
    if root is None:
        return None
    if given is None:
        newest = _newest(root / RUNS_FOLDER)
        if not newest:
            print(f"llmjudge show: no results files in {root / RUNS_FOLDER}", file=sys.stderr)
            return None
        return str(newest[0])
    below_root = root / given
    return str(below_root) if not Path(given).is_absolute() and below_root.exists() else given


def _show(args: argparse.Namespace) -> int:
    path = _results_path(args.results)
    if path is None:
        return 2
    data = _load(path)
    if data is None:
        return 2
    print("\n".join(summary_lines(data)))
    return 0


def compare_files(
    baseline: dict[str, Any], candidate: dict[str, Any], *, margin: float, alpha: float
) -> list[dict[str, Any]]:
    """The per-benchmark comparison of two results files, as the results file records it."""
    from ..gating.run_verdict import release_verdicts_of_results
    from ..gating.statistics import compare_benchmarks

    before, now = release_verdicts_of_results(baseline), release_verdicts_of_results(candidate)
    pairs = {code: (before[code], verdicts) for code, verdicts in now.items() if code in before}
    return [c.to_dict() for c in compare_benchmarks(pairs, margin=margin, alpha=alpha)]


def _compare(args: argparse.Namespace) -> int:
    from ..reporting.run_summary import comparison_table

    if args.pairwise:
        return _compare_pairwise(args)
    if args.candidate is None:
        print("llmjudge compare: give the baseline and the candidate results files", file=sys.stderr)
        return 2
    if args.fail_on == "worse":
        print("llmjudge compare: --fail-on worse needs --pairwise", file=sys.stderr)
        return 2
    baseline, candidate = _load(args.baseline), _load(args.candidate)
    if baseline is None or candidate is None:
        return 2
    comparisons = compare_files(baseline, candidate, margin=args.margin, alpha=args.alpha)
    comparisons, notes = judged_alike_files(comparisons, baseline, candidate)
    print("\n".join([*judge_identity_lines(baseline, candidate), "", *comparison_table(comparisons)]))
    if notes:
        print("\n".join(notes))
    print_label_agreement(baseline, candidate, margin=args.margin, alpha=args.alpha)
    if args.fail_on != "regression":
        return 0
    from ..gating.drift import JUDGE_CHANGED, WAY_OUT

    changed = [c for c in comparisons if c["verdict"] == JUDGE_CHANGED]
    for c in changed:
        print(
            f"{c['benchmark']}: {c['judge_change']}: the comparison measures the judge too; {WAY_OUT}",
            file=sys.stderr,
        )
    regressions = [c["benchmark"] for c in comparisons if c["verdict"] == "regression"]
    if regressions:
        print(f"significant regression: {', '.join(regressions)}", file=sys.stderr)
    return REGRESSION if regressions or changed else 0


def judge_identity_lines(baseline: dict[str, Any], candidate: dict[str, Any]) -> list[str]:
    """Which judges answered each run's verdicts, each said once (from the results files' ``judges``)."""
    from ..gating.drift import judges_of_results

    lines = []
    for side, data in (("baseline", baseline), ("candidate", candidate)):
        seen = [s for judges in judges_of_results(data).values() for s in judges]
        labels = list(dict.fromkeys(s.label() for s in seen))
        if not labels:
            labels = ["not recorded (no judge call, or a results file from before judges were recorded)"]
        lines += [f"{side} judge: {label}" for label in labels]
    return lines


def judged_alike_files(
    comparisons: list[dict[str, Any]], baseline: dict[str, Any], candidate: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The comparisons of two results files, each across a change of judge marked ``judge changed``
    (another model string or snapshot) or noted (a fingerprint alone), as a run's baseline
    comparison marks them; and what to say of them."""
    from ..gating.drift import JUDGE_CHANGED, judge_change, judges_of_results

    before, now = judges_of_results(baseline), judges_of_results(candidate)
    marked: list[dict[str, Any]] = []
    notes: list[str] = []
    for comparison in comparisons:
        code = comparison["benchmark"]
        change = judge_change(before.get(code, ()), now.get(code, ()))
        if change is not None:
            comparison = {**comparison, "judge_change": change.text()}
            if change.stop:
                comparison["verdict"] = JUDGE_CHANGED
            notes.append(f"{code}: {change.text()}")
        marked.append(comparison)
    return marked, notes


def print_label_agreement(
    baseline: dict[str, Any], candidate: dict[str, Any], *, margin: float, alpha: float
) -> None:
    """When both runs judged labelled cases: the judge's agreement with the labels, before → after."""
    from ..gating.label_agreement import compare_label_results
    from ..reporting.label_agreement import agreement_lines

    lines = agreement_lines(compare_label_results(baseline, candidate, margin=margin, alpha=alpha))
    if lines:
        print("\n".join(["", *lines]))


def _compare_pairwise(args: argparse.Namespace) -> int:
    """The pairwise comparison a results file holds, recomputed from its cases' outcomes: no judge."""
    from ..reporting.pairwise import figures_of_results, pairwise_table

    if args.candidate is not None:
        print("llmjudge compare --pairwise: give one results file (a pairwise run's)", file=sys.stderr)
        return 2
    data = _load(args.baseline)
    if data is None:
        return 2
    figures = figures_of_results(data, margin=args.margin, alpha=args.alpha)
    if not figures:
        print(f"{args.baseline}: no pairwise verdicts (run with --llmjudge-pairwise)", file=sys.stderr)
        return 2
    print("\n".join(pairwise_table(figures)))
    worse = [f.benchmark for f in figures if f.verdict == "worse"]
    if worse and args.fail_on == "worse":
        print(f"significantly worse than the baseline: {', '.join(worse)}", file=sys.stderr)
        return REGRESSION
    return 0


def _report(args: argparse.Namespace) -> int:
    from ..reporting.html import write_report
    from ..suite.detect import is_benchmark_file
    from ..suite.safe_write import Guard

    data = _load(args.results)
    baseline = _load(args.baseline) if args.baseline else None
    if data is None or (args.baseline and baseline is None):
        return 2
    output = Path(args.output)
    protected = {Path(args.results).resolve(): "the results file the report is made from"}
    if args.baseline:
        protected[Path(args.baseline).resolve()] = "the baseline results file"
    if is_benchmark_file(output.resolve(), ["benchmarks"], Path.cwd()):
        protected[output.resolve()] = "a benchmark file"
    try:
        write_report(data, output, baseline=baseline, guard=Guard(protected, "--force", args.force))
    except OSError as error:
        print(f"llmjudge report: cannot write {args.output}: {error}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


def _probability(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, not {text}")
    return value


def add_runs_parsers(commands: Any) -> None:
    runs = commands.add_parser("runs", help="list the results files of past runs, newest first")
    runs.add_argument(
        "--rootdir",
        default=None,
        help="repository root holding .llmjudge/runs (default: the rootdir pytest would use from here)",
    )
    runs.set_defaults(handler=_runs)

    show = commands.add_parser("show", help="print the summary of one results file")
    show.add_argument(
        "results",
        nargs="?",
        help="results file (.llmjudge/runs/….json, from here or from the project root; "
        "default: the project's newest run)",
    )
    show.set_defaults(handler=_show)

    compare = commands.add_parser(
        "compare",
        help="compare two runs case by case (paired McNemar, Holm across benchmarks)",
        description="Compare a candidate run with a baseline run from their results files, and name the "
        "judges that answered each (model string, resolved snapshot, fingerprint). A benchmark judged by "
        "another model string or snapshot in the two runs is 'judge changed', not better or worse; a "
        "fingerprint change alone is a warning. Exit status 1 when a benchmark regressed significantly "
        "or its judge changed and --fail-on regression is given. With --pairwise, "
        "report the pairwise comparison one run's results file holds (no judge is called); exit "
        "status 1 when a candidate is significantly worse and --fail-on worse is given.",
    )
    compare.add_argument("baseline", help="results file of the baseline run (--pairwise: the pairwise run)")
    compare.add_argument("candidate", nargs="?", help="results file of the candidate run")
    compare.add_argument(
        "--pairwise", action="store_true", help="report a pairwise run's comparison with its baseline outputs"
    )
    compare.add_argument("--margin", type=_probability, default=0.05, help="smallest change to detect (0.05)")
    compare.add_argument("--alpha", type=_probability, default=0.05, help="significance level (0.05)")
    compare.add_argument(
        "--fail-on",
        choices=["regression", "worse"],
        help="exit 1 on a significant regression or a changed judge (or, with --pairwise, a significantly "
        "worse candidate)",
    )
    compare.set_defaults(handler=_compare)

    report = commands.add_parser("report", help="write the HTML report of a results file")
    report.add_argument("results", help="results file of the run")
    report.add_argument("--baseline", help="results file of a baseline run, for the flipped cases")
    report.add_argument("-o", "--output", required=True, help="HTML file to write")
    report.add_argument(
        "--force",
        action="store_true",
        help="write over the output even if it is a Python file, a benchmark or an input of the report",
    )
    report.set_defaults(handler=_report)
