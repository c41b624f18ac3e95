"""Flag judge prompts whose "Automatic fail" bullets split one AND condition (rule LJ001 alone).

    python tools/flag_compound_logic.py [PATHS…] [--weak] [--format text|json|sarif] [--fix --unsafe-fixes]

Same output and exit status as ``llmjudge lint --select LJ001`` (``--select LJ001,LJ004`` with
``--weak``, which adds the weaker signs of the opt-in LJ004 as warnings).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from pytest_llmjudge.lint.cli import add_lint_arguments, run_lint


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flag_compound_logic.py", description=__doc__.splitlines()[0])
    add_lint_arguments(parser, with_selection=False)
    parser.add_argument("--weak", action="store_true", help="also report weaker signs (LJ004, warnings)")
    args = parser.parse_args(argv)
    return run_lint(args, select=("LJ001", "LJ004") if args.weak else ("LJ001",))


if __name__ == "__main__":
    raise SystemExit(main())
