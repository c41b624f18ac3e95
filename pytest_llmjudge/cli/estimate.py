"""``llmjudge estimate [PATHS] [OPTIONS]``: what a run would cost, before running it.

It runs pytest on PATHS with ``--llmjudge-estimate``, so collection, settings, caches and options
are exactly a run's; pytest calls no model and prints, per benchmark, the calls the caches cannot
answer, their input and output tokens and their cost with a low–high range. This prints that.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

_SECTION = re.compile(r"^=+ llmjudge estimate =+$")
_RULE = re.compile(r"^=+( .* =+)?$")


def add_estimate_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``estimate`` to the ``llmjudge`` command."""
    parser = commands.add_parser(
        "estimate",
        help="print what a run would cost (calls, tokens, USD) without calling any model",
        description="Collect the benchmarks under PATHS as `pytest PATHS OPTIONS` would, look their "
        "requests up in the verdict and output caches, and print per benchmark the calls a run would "
        "make, their input and output tokens and their cost (with a low-high range). No model is "
        "called. Exit 0, or pytest's exit status when it could not collect.",
    )
    parser.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        metavar="PATHS AND OPTIONS",
        help="benchmark files or folders (default: pytest's testpaths), then the run's options as pytest "
        "takes them: e.g. benchmarks/ --llmjudge-model openai:gpt-4o-mini (options first: after --)",
    )
    parser.set_defaults(handler=estimate)


def estimate(args: argparse.Namespace) -> int:
    extra = [a for a in args.pytest_args if a != "--"]
    command = [sys.executable, "-m", "pytest", "--llmjudge-estimate", "-q", "--color=no"]
    command += ["-p", "no:syrupy", "-p", "no:cacheprovider", *extra]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = estimate_section(run.stdout)
    if run.returncode != 0 or lines is None:
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        if lines is None:
            print("llmjudge estimate: pytest collected no benchmark case to estimate", file=sys.stderr)
        return run.returncode or 2
    print("\n".join(lines))
    return 0


def estimate_section(output: str) -> list[str] | None:
    """The lines of pytest's ``llmjudge estimate`` section, None when it wrote none."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if _SECTION.match(line)), None)
    if start is None:
        return None
    section = []
    for line in lines[start + 1 :]:
        if _RULE.match(line):
            break
        section.append(line)
    return section
