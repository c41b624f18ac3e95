"""Which files are benchmarks: decided from the path and a byte scan, without parsing YAML.

Kept free of heavy imports: the plugin loads in every pytest run of the environment.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import SpecError
from .reading import read_regular_file

_CODE_LINE = re.compile(rb"^code\s*:", re.MULTILINE)
_CODE_STEM = re.compile(r"^[A-Z][A-Z0-9]*(?:[-_.][A-Za-z0-9]+)*$")
_LIST_START = re.compile(rb"^\s*(?:#[^\n]*\n\s*)*-\s", re.DOTALL)
# A top-level list whose first item starts with ``code:`` (``- code: X``, ``[{code: X}]``): a
# benchmark written as a list, collected so that loading it reports the mistake at its line.
_BENCHMARK_LIST = re.compile(rb"^\s*(?:#[^\n]*\n\s*)*(?:-[ \t]+|\[\s*)\{?\s*code\s*:", re.DOTALL)


def is_benchmark_file(path: Path, folders: list[str], rootdir: Path | None = None) -> bool:
    """A YAML file under a benchmark folder that declares ``code:`` or is named like a code.

    Folders are matched below ``rootdir`` only, so a checkout that itself lives in a folder
    named ``benchmarks`` does not turn every YAML file into a benchmark. A list whose first item
    starts with ``code:`` is collected too, so that loading reports it. Other YAML (lowercase
    notes, case lists) and Markdown beside benchmarks are left alone.
    """
    if path.suffix not in {".yaml", ".yml"} or "__snapshots__" in path.parts:
        return False
    parents = path.parent.parts
    if rootdir is not None and path.is_relative_to(rootdir):
        parents = path.parent.relative_to(rootdir).parts
    if not any(part in folders for part in parents):
        return False
    try:
        head = read_regular_file(path, str(path))  # a FIFO named like a benchmark is not waited on
    except SpecError:
        return False
    if _CODE_LINE.search(head) or _BENCHMARK_LIST.match(head):
        return True
    return bool(_CODE_STEM.match(path.stem)) and not _LIST_START.match(head)
