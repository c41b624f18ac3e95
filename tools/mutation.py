"""Mutation testing of the run's decisions: ``pytest_llmjudge/gating/`` and ``judging/redact.py``.

    pip install -e '.[mutation]'
    python tools/mutation.py [--min-score 90] [--max-children N] [--keep]

mutmut (set up in pyproject.toml's ``[tool.mutmut]``) copies the package and the tests into
``mutants/``, makes one small change at a time to each function of gating/ and redact.py (a
``<`` for a ``<=``, a dropped argument, another string) and runs the unit tests that reach the
changed function. A mutant that no test notices "survived". The working tree is not changed.

Prints killed / survived / total, the score (killed ÷ tested, as ``mutmut badge`` counts it), the
wall time and every mutant not killed (``mutmut show NAME`` shows its diff), and exits 1 when the
score is under ``--min-score``. ``--keep`` reuses the results of the last run for unchanged code.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
NOT_KILLED = ("survived", "no tests", "suspicious", "segfault")


def _mutmut() -> str:
    """The mutmut of this interpreter's environment, else the one on PATH."""
    beside = Path(sys.executable).parent / "mutmut"
    found = str(beside) if beside.exists() else shutil.which("mutmut")
    if found is None:
        raise SystemExit("mutmut is not installed: pip install -e '.[mutation]'")
    return found


def _mutmut_run(mutmut: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([mutmut, *args], cwd=ROOT, capture_output=True, text=True, check=False)


def score(stats: dict[str, int]) -> float:
    """Killed (a timeout counts: the tests noticed) out of the mutants tested, in percent."""
    tested = stats["total"] - stats["skipped"]
    return 100.0 if tested <= 0 else 100.0 * (stats["killed"] + stats["timeout"]) / tested


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mutation.py", description=__doc__.splitlines()[0])
    parser.add_argument("--min-score", type=float, default=90.0, help="lowest passing score, in %%")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="parallel mutants")
    parser.add_argument("--keep", action="store_true", help="reuse mutants/ from the last run")
    args = parser.parse_args(argv)

    mutmut = _mutmut()
    if not args.keep:
        shutil.rmtree(MUTANTS, ignore_errors=True)
    started = time.monotonic()
    run = _mutmut_run(mutmut, "run", "--max-children", str(args.max_children))
    elapsed = time.monotonic() - started
    MUTANTS.mkdir(exist_ok=True)
    (MUTANTS / "run.log").write_text(run.stdout + run.stderr)
    if run.returncode != 0:
        print((run.stdout + run.stderr)[-4000:], file=sys.stderr)
        print(f"mutmut run failed ({run.returncode}); its log: {MUTANTS / 'run.log'}", file=sys.stderr)
        return 2
    exported = _mutmut_run(mutmut, "export-cicd-stats")
    if exported.returncode != 0:
        print(exported.stdout + exported.stderr, file=sys.stderr)
        return 2
    stats: dict[str, int] = json.loads((MUTANTS / "mutmut-cicd-stats.json").read_text())

    listed = _mutmut_run(mutmut, "results").stdout.splitlines()
    not_killed = [line.strip() for line in listed if line.rpartition(": ")[2] in NOT_KILLED]
    for line in sorted(not_killed):
        print(line)
    achieved = score(stats)
    minutes, seconds = divmod(round(elapsed), 60)
    print(
        f"mutation: {stats['killed']} killed, {stats['survived']} survived, {stats['no_tests']} no tests, "
        f"{stats['timeout']} timeout, {stats['suspicious']} suspicious of {stats['total']} "
        f"({stats['skipped']} skipped): {achieved:.1f} % killed (minimum {args.min_score:g} %) "
        f"in {minutes}m{seconds:02d}s"
    )
    return 0 if achieved >= args.min_score else 1


if __name__ == "__main__":
    raise SystemExit(main())
