"""The ``llmjudge`` command: compile previews, lint, rules and cache maintenance."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..suite.errors import SpecError, display_path
from ..suite.vocabulary import PROMPT_STYLES


def _compile(args: argparse.Namespace) -> int:
    """Print the exact request the judge receives for a benchmark's cases."""
    from ..compile.request import compile_case, compile_rubric
    from ..compile.sections import sections_for
    from ..judging.rendering import render_messages
    from ..suite.files import load_benchmark
    from ..suite.root import RootError, find_root
    from ..suite.settings import pairwise_mode, prompt_style_for, resolve

    try:
        project = find_root([args.path])
        root = Path(args.rootdir).resolve() if args.rootdir else project.rootdir
        # the style pytest would use: the environment and the ini file, as in a run
        settings = resolve(lambda name: None, lambda name: project.ini(f"llmjudge_{name}"))
    except (RootError, ValueError) as exc:
        print(f"llmjudge compile: {exc}", file=sys.stderr)
        return 2
    path = Path(args.path)
    display = display_path(path, root)
    try:
        benchmark = load_benchmark(path, display, root, allow_outside=settings.allow_outside_root)
        sections = sections_for(benchmark, root)
        task_texts = _task_requests(benchmark, root, settings)
    except SpecError as error:
        print(error.render(), file=sys.stderr)
        return 2
    style = args.style or prompt_style_for(benchmark, settings)
    cases = [c for c in benchmark.cases if args.case in (None, c.id)]
    if args.case and not cases:
        known = ", ".join(c.id for c in benchmark.cases) or "none"
        print(f"{display}: no case '{args.case}' (cases: {known})", file=sys.stderr)
        return 2
    if not cases:
        print(f"# {benchmark.code}: no cases; the rubric every case would get:\n")
        print(compile_rubric(sections, benchmark.code, style), end="")
        return 0
    pairwise = pairwise_mode(benchmark, settings)
    for index, case in enumerate(cases):
        if index:
            print()
        if pairwise and case.spec.baseline_output is not None:
            _print_pairwise(benchmark, sections, case, style)
            continue
        request = compile_case(benchmark, sections, case, style)
        note = "  (pairwise against the --llmjudge-baseline run's output: shown alone)" if pairwise else ""
        print(f"# {benchmark.code}::{case.id}  prompt {request.digest}{note}")
        print(render_messages(request), end="")
        if case.id in task_texts:
            print(f"\n# {benchmark.code}::{case.id}  task request (the output above is produced by it)")
            print(task_texts[case.id])
    return 0


def _print_pairwise(benchmark: Any, sections: Any, case: Any, style: str) -> None:
    """Both orders of a pairwise case's request, as the judge receives them."""
    from ..compile.pairwise import compile_both_orders
    from ..judging.pairwise_judge import render_pair

    output = case.spec.candidate_output
    for request in compile_both_orders(benchmark, sections, case, output, case.spec.baseline_output, style):
        print(f"# {benchmark.code}::{case.id}  pairwise, {request.order}  prompt {request.digest}")
        print(render_pair(request), end="")


def _task_requests(benchmark: Any, root: Path, settings: Any) -> dict[str, str]:
    """What the benchmark's model task sends for each case (none for a Python task)."""
    from ..models.models import judge_label
    from ..tasks.build import TaskOptions, build_task, task_requests

    options = TaskOptions(None, settings.task_model, settings.task_base_url, settings.allow_outside_root)
    if benchmark.spec.task is None or isinstance(benchmark.spec.task, str):
        return {}
    texts = task_requests(benchmark, build_task(benchmark, root, options, judge_label))
    return {key.removeprefix("task request "): text for key, text in texts.items()}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llmjudge",
        description="pytest-llmjudge tools. Run the benchmarks themselves with `pytest benchmarks/`.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    compile_parser = commands.add_parser(
        "compile",
        help="print the exact request the judge receives",
        description="Print the messages and output schema the judge model is sent for each case of a "
        "benchmark (or the rubric alone for a benchmark without cases).",
    )
    compile_parser.add_argument("path", help="benchmark YAML file")
    compile_parser.add_argument("--case", help="only this case id")
    compile_parser.add_argument(
        "--style",
        choices=PROMPT_STYLES,
        help="prompt style (default: as a pytest run would choose it: the benchmark's "
        "judge.prompt_style, else LLMJUDGE_PROMPT_STYLE, else ini llmjudge_prompt_style, else no_reasoning)",
    )
    compile_parser.add_argument(
        "--rootdir",
        default=None,
        help="repository root that paths in the file are relative to (default: the rootdir pytest would use)",
    )
    compile_parser.set_defaults(handler=_compile)

    from ..lint.cli import add_lint_parser, add_rules_parser

    add_lint_parser(commands)
    add_rules_parser(commands)
    from .cache import add_cache_parser

    add_cache_parser(commands)
    from .calibrate import add_calibrate_parser

    add_calibrate_parser(commands)
    from .estimate import add_estimate_parser

    add_estimate_parser(commands)
    from .runs import add_runs_parsers

    add_runs_parsers(commands)
    from .freeze import add_freeze_parser

    add_freeze_parser(commands)
    from .init import add_init_parser
    from .schema import add_schema_parser

    add_init_parser(commands)
    add_schema_parser(commands)
    from .merge import add_merge_parser

    add_merge_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
