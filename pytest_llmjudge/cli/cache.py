"""``llmjudge cache stats``, ``llmjudge cache prune --older-than DAYS`` and
``llmjudge cache merge A.sqlite B.sqlite … -o C.sqlite``.

``add_cache_parser`` plugs into the ``llmjudge`` command's sub-parsers; each command sets
``handler`` to a function taking the parsed namespace and returning the exit status.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..execution.cache import CacheError, CacheStats, VerdictCache
from ..models.redact import redact

DEFAULT_PATH = ".llmjudge/cache.sqlite"
EXIT_OK, EXIT_USAGE = 0, 2


def _days(value: str) -> float:
    try:
        days = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days") from None
    if days < 0:
        raise argparse.ArgumentTypeError("the number of days cannot be negative")
    return days


def add_cache_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``cache stats``, ``cache prune`` and ``cache merge`` to the ``llmjudge`` command."""
    cache = commands.add_parser(
        "cache",
        help="inspect or prune the verdict cache",
        description="The verdict cache pytest-llmjudge keeps between runs (SQLite).",
    )
    cache.add_argument(
        "--path",
        type=Path,
        default=None,
        help=f"cache file (default: $LLMJUDGE_CACHE_PATH, ini llmjudge_cache_path or {DEFAULT_PATH}, below "
        "the rootdir pytest would use from here)",
    )
    actions = cache.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    stats = actions.add_parser("stats", help="entries, size, age and models in the cache")
    stats.set_defaults(handler=_stats)
    prune = actions.add_parser("prune", help="delete entries no run has used for DAYS days")
    prune.add_argument(
        "--older-than", type=_days, required=True, metavar="DAYS", help="age in days (fractions allowed)"
    )
    prune.set_defaults(handler=_prune)
    merge = actions.add_parser(
        "merge",
        help="merge the caches of several runs (CI shards) into one file",
        description="Copy every verdict and produced output of the given caches into a new file. "
        "Two entries under one key with different answers keep the newest, and are reported.",
    )
    merge.add_argument("sources", nargs="+", type=Path, metavar="CACHE", help="a cache file (SQLite)")
    merge.add_argument("-o", "--output", type=Path, required=True, metavar="PATH", help="the merged cache")
    merge.set_defaults(handler=_merge)


def _path(args: argparse.Namespace) -> Path:
    """``--path`` (from here), else the file a pytest run here uses: ``$LLMJUDGE_CACHE_PATH`` or ini
    ``llmjudge_cache_path`` (default .llmjudge/cache.sqlite) below the rootdir pytest would use."""
    from ..suite.root import find_root
    from ..suite.settings import resolve

    chosen: Path | None = args.path
    if chosen is not None:
        return chosen
    project = find_root([])
    settings = resolve(lambda name: None, lambda name: project.ini(f"llmjudge_{name}"))
    return project.rootdir / settings.cache_path


def _open(args: argparse.Namespace, *, read_only: bool = False) -> VerdictCache | None:
    try:
        return VerdictCache(_path(args), create=False, read_only=read_only)
    except (CacheError, ValueError) as exc:  # ValueError: a configuration pytest would refuse
        print(f"llmjudge cache: {exc}", file=sys.stderr)
        return None


def _stats(args: argparse.Namespace) -> int:
    cache = _open(args, read_only=True)  # a read-only cache (a mounted CI artifact) can be inspected
    if cache is None:
        return EXIT_USAGE
    try:
        stats = cache.stats()
    except CacheError as exc:  # damage that the check on opening did not see
        print(f"llmjudge cache: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        cache.close()
    for line in stats_lines(stats):
        print(line)
    return EXIT_OK


def stats_lines(stats: CacheStats, now: float | None = None) -> list[str]:
    """``llmjudge cache stats`` output."""
    lines = [
        f"cache: {stats.path}",
        f"entries: {stats.entries} verdict(s) from {stats.benchmarks} benchmark(s), {_size(stats.size)}",
    ]
    if stats.oldest is not None and stats.newest is not None:
        current = time.time() if now is None else now
        lines.append(
            f"last used: oldest {_age(current - stats.oldest)} ago, newest {_age(current - stats.newest)} ago"
        )
    if stats.input_tokens or stats.output_tokens:
        lines.append(f"tokens a full rerun saves: in/out {stats.input_tokens}/{stats.output_tokens}")
    if stats.models:
        lines.append("verdicts per model:")
    for model, count in stats.models:  # labels written before they were redacted are redacted here
        lines.append(f"  {count:>8}  {redact(model)}")
    return lines


def _prune(args: argparse.Namespace) -> int:
    cache = _open(args)
    if cache is None:
        return EXIT_USAGE
    try:
        before = cache.stats().entries
        removed = cache.prune(args.older_than)
    except CacheError as exc:
        print(f"llmjudge cache: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        cache.close()
    days = f"{args.older_than:g}"
    print(f"removed {removed} of {before} verdict(s) unused for {days} day(s); {before - removed} left")
    return EXIT_OK


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024**2:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024**2:.1f} MiB"


def _age(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"


def _merge(args: argparse.Namespace) -> int:
    from ..execution.cache_merge import merge_caches

    sources: list[Path] = args.sources
    if args.output.resolve() in {source.resolve() for source in sources}:
        print(
            f"llmjudge cache merge: {args.output} is also a source: write the merge elsewhere",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        report = merge_caches(sources, args.output)
    except (CacheError, OSError) as exc:
        print(f"llmjudge cache merge: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for (source, table), count in report.taken.items():
        print(f"{source}: {count} {'verdict' if table == 'verdicts' else 'output'}(s) taken")
    for line in report.conflicts:
        print(redact(line))
    if report.conflicts:
        print(f"{len(report.conflicts)} key(s) answered differently: kept the newest of each")
    print(f"merged cache: {args.output}")
    return 0
