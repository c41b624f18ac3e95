"""Cached-run and start-up time of this checkout against an earlier git revision, side by side.

    python bench/against_revision.py REV [--cases N] [--runs R]

Checks REV out into a temporary git worktree, which runs first on ``PYTHONPATH`` (ahead of this
checkout's editable install), writes the same suite of N cases (``bench/throughput.py``) for
each, fills each one's own verdict cache and snapshots (they may differ between versions), then
alternates R runs of each with every verdict cached, and R runs of each on a project without
benchmarks. Prints the medians and the ratios this checkout / REV: one machine, one run, so the
ratio holds even when the machine is slower or faster than usual.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import throughput  # noqa: E402  (the suite and the timed runs, shared with the throughput bench)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("revision", help="the git revision to compare with (e.g. HEAD~5 or a tag)")
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="llmjudge-against-") as temp:
        base = Path(temp) / "base"
        subprocess.run(
            ["git", "-C", str(HERE.parent), "worktree", "add", "--detach", "-q", str(base), options.revision],
            check=True,
        )
        try:
            compare(Path(temp), base, options.cases, options.runs, options.revision)
        finally:
            remove = ["git", "-C", str(HERE.parent), "worktree", "remove", "--force", str(base)]
            subprocess.run(remove, check=False)


def compare(temp: Path, base: Path, cases: int, runs: int, revision: str) -> None:
    sides = {"this checkout": None, revision: base}
    projects: dict[str, Path] = {}
    empties: dict[str, Path] = {}
    envs: dict[str, dict[str, str]] = {}
    for name, source in sides.items():
        root = temp / f"suite-{len(projects)}"
        root.mkdir()
        throughput.write_project(root, cases, 50)
        empty = temp / f"empty-{len(empties)}"
        empty.mkdir()
        (empty / "pytest.ini").write_text("[pytest]\n")
        (empty / "test_plain.py").write_text("def test_plain():\n    pass\n")
        env = throughput.environment(root, 0.0)
        if source is not None:
            env["PYTHONPATH"] = f"{source}:{root}"
        projects[name], empties[name], envs[name] = root, empty, env
        throughput.run_pytest(root, env, "benchmarks", "--snapshot-update")  # its cache and snapshots
    cached: dict[str, list[float]] = {name: [] for name in sides}
    plain: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(runs):
        for name in sides:
            cached[name].append(throughput.run_pytest(projects[name], envs[name], "benchmarks").seconds)
            plain[name].append(throughput.run_pytest(empties[name], envs[name]).seconds)
    print(f"N={cases} cases, {runs} alternating runs each; medians in seconds")
    print(f"{'':32}{'this checkout':>15}{revision:>15}{'ratio':>8}")
    for label, times in (("all cached (syrupy on)", cached), ("no benchmarks (start-up)", plain)):
        ours, theirs = (statistics.median(times[name]) for name in sides)
        print(f"{label:32}{ours:15.2f}{theirs:15.2f}{ours / theirs:8.2f}")


if __name__ == "__main__":
    if shutil.which("git") is None:
        raise SystemExit("needs git")
    main()
