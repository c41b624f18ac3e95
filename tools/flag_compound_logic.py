"""Flag judge prompts whose "Automatic fail" bullets split one AND condition (rule LJ001 alone).

    python tools/flag_compound_logic.py [PATHS…] [--format text|json|sarif] [--fix --unsafe-fixes]

Same output and exit status as ``llmjudge lint --select LJ001``.
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
    return run_lint(parser.parse_args(argv), select=("LJ001",))


if __name__ == "__main__":
    raise SystemExit(main())
