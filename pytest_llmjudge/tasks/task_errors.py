"""Where a task's exception came from: the last frames of its traceback in the user's own code."""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent  # pytest_llmjudge: the plugin's own frames
THIRD_PARTY = {"site-packages", "dist-packages"}
SHOWN = 3


def user_frames(exc: BaseException, root: Path, shown: int = SHOWN) -> list[str]:
    """The last ``shown`` frames of ``exc``'s traceback in files under ``root`` (installed
    packages left out), as ``  path:line in function: code``; when there are none, the last frames
    of any code but the plugin's and the standard library's."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _ours(Path(f.filename))]
    root = root.resolve()
    own = [f for f in frames if _within(Path(f.filename), root)]
    lines = []
    for frame in (own or frames)[-shown:]:
        path = Path(frame.filename)
        where = path.resolve().relative_to(root).as_posix() if _within(path, root) else frame.filename
        code = f": {frame.line.strip()}" if frame.line else ""
        lines.append(f"  {where}:{frame.lineno} in {frame.name}{code}")
    return lines


def _within(path: Path, root: Path) -> bool:
    resolved = path.resolve()
    return resolved.is_relative_to(root) and not THIRD_PARTY & set(resolved.parts)


def _ours(path: Path) -> bool:
    """A frame of the plugin or of the standard library (threads, asyncio): never the user's."""
    resolved = path.resolve()
    if resolved.is_relative_to(PACKAGE):
        return True
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    return resolved.is_relative_to(stdlib) and not THIRD_PARTY & set(resolved.parts)
