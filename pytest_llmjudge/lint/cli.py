"""``llmjudge lint`` and ``llmjudge rules``: argparse sub-commands over the lint engine.

``add_lint_parser`` / ``add_rules_parser`` plug into the ``llmjudge`` command's sub-parsers;
each sets ``handler`` to a function taking the parsed namespace and returning the exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..suite.root import RootError, find_root
from .diagnostics import Severity
from .docs import render_rules_markdown
from .engine import Linter
from .formats import FORMATS, render, render_statistics, severity_of
from .registry import SelectionError, all_rules, get_rule
from .settings import SettingsError, settings_for_root

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _codes(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def add_lint_arguments(parser: argparse.ArgumentParser, with_selection: bool = True) -> None:
    """The options of ``llmjudge lint``; ``tools/flag_compound_logic.py`` reuses them without selection."""
    parser.add_argument("paths", nargs="*", type=Path, help="prompt files, benchmark files or folders")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    if with_selection:
        parser.add_argument("--select", type=_codes, help="comma-separated codes, prefixes or names to run")
        parser.add_argument("--ignore", type=_codes, default=[], help="comma-separated codes to skip")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes and report what changed")
    parser.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix, apply unsafe fixes too (LJ001)"
    )
    parser.add_argument("--statistics", action="store_true", help="print counts per rule instead of findings")
    parser.add_argument("--isolated", action="store_true", help="ignore [tool.llmjudge.lint] settings")
    parser.add_argument(
        "--force-exclude", action="store_true", help="apply 'exclude' to paths named on the command line too"
    )


def add_lint_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "lint",
        help="lint judge prompts, benchmarks and prompt templates",
        description="Lint judge prompt files, benchmark files and prompt-template YAML files.",
    )
    add_lint_arguments(parser)
    parser.set_defaults(handler=run_lint)
    return parser


def add_rules_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "rules", help="list the lint rules, or explain one", description="List lint rules."
    )
    parser.add_argument("rule", nargs="?", help="a code or name to explain (e.g. LJ001)")
    parser.add_argument("--markdown", action="store_true", help="print the docs/rules.md reference")
    parser.set_defaults(handler=run_rules)
    return parser


def run_lint(args: argparse.Namespace, select: Sequence[str] | None = None) -> int:
    """Lint ``args.paths``; ``select`` overrides ``--select`` and the settings (tools pin rules)."""
    paths: list[Path] = list(args.paths)
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"llmjudge lint: error: no such file or folder: {missing[0]}", file=sys.stderr)
        return EXIT_USAGE
    try:
        # The root pytest would choose for the same arguments in the same folder, so that paths in
        # benchmark files resolve as they do under `pytest` (and under pre-commit, which passes
        # file names from the repository root).
        settings = settings_for_root(find_root(paths, Path.cwd()), isolated=args.isolated)
        pinned = select if select is not None else getattr(args, "select", None)
        linter = Linter(settings, select=pinned, ignore=getattr(args, "ignore", []))
    except (SettingsError, SelectionError, RootError) as exc:
        print(f"llmjudge lint: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    targets = paths or [settings.root / p for p in settings.paths]
    files = linter.discover(targets, force_exclude=args.force_exclude)
    if args.fix:
        for path in files:
            outcome = linter.fix_file(path, unsafe=args.unsafe_fixes)
            if outcome.fixed:
                print(
                    f"{outcome.display}: fixed {len(outcome.fixed)} ({', '.join(outcome.fixed)})",
                    file=sys.stderr,
                )
    diagnostics = [d for path in files for d in linter.lint_file(path)]
    output = render_statistics(diagnostics) if args.statistics else render(diagnostics, args.format)
    sys.stdout.write(output)
    failed = any(severity_of(d) is Severity.ERROR for d in diagnostics)
    return EXIT_FINDINGS if failed else EXIT_CLEAN


def run_rules(args: argparse.Namespace) -> int:
    if args.markdown:
        sys.stdout.write(render_rules_markdown())
        return EXIT_CLEAN
    if args.rule:
        try:
            rule = get_rule(args.rule)
        except SelectionError as exc:
            print(f"llmjudge rules: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        extras = (", fixable" if rule.fixable else "") + (", opt-in" if rule.opt_in else "")
        print(f"{rule.code} {rule.name} ({rule.severity.value}{extras})\n")
        print(rule.doc())
        return EXIT_CLEAN
    for rule in all_rules():
        fix = "[*]" if rule.fixable else "   "
        severity = f"{rule.severity.value}{'*' if rule.opt_in else ''}"
        print(f"{rule.code}  {rule.name:<28}  {severity:<8}  {fix}  {rule.summary}")
    print("\n[*] has a fix; * after the severity: opt-in, runs only when selected by code or name")
    return EXIT_CLEAN
