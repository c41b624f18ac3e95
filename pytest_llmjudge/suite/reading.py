"""Reading the files a suite names: regular files only, inside the repository unless allowed.

A FIFO, a device or a directory named as a benchmark, prompt, cases or rubric file is refused
before it is opened (opening a FIFO for reading waits for a writer; reading ``/dev/zero`` never
ends), and a path that leaves the repository root, after symlinks are resolved, is an error
unless the run allows it: files outside the repository would be sent to the judge unseen.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import Location, SpecError
from .text import shown

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_ROOT_HINT = "paths in benchmark files are relative to the repository root (pytest's rootdir)"


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def read_regular_file(
    path: Path, display: str, *, label: str = "", at: Location | None = None, field: str = ""
) -> bytes:
    """The bytes of the regular file at ``path``; anything else raises ``SpecError``.

    ``label`` and ``at`` name the file as the field that points to it does ("cases file", at the
    ``cases_file:`` line); without them the error is at the file itself.
    """
    where = at or Location(display, 1, 1)
    named = f"{label} {shown(display, 200)}" if label else "the file"
    if "\x00" in str(path):
        raise SpecError(where, field, f"{named}: the path contains a NUL character", "fix the path")
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            # O_NONBLOCK: should the path have become a FIFO since the check, opening still returns.
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            with os.fdopen(descriptor, "rb") as handle:
                mode = os.fstat(handle.fileno()).st_mode
                if stat.S_ISREG(mode):
                    return handle.read()
    except OSError as exc:
        raise _read_error(exc, named, where, field, bool(label)) from None
    raise SpecError(where, field, f"{named} is not a regular file but {_kind(mode)}", "point to a text file")


def _read_error(exc: OSError, named: str, where: Location, field: str, pointed: bool) -> SpecError:
    if exc.errno in {errno.ENOENT, errno.ENOTDIR}:
        hint = _ROOT_HINT if pointed else "check the path"
        return SpecError(where, field, f"{named} does not exist", hint)
    if exc.errno == errno.ENAMETOOLONG:
        return SpecError(where, field, f"{named}: file name too long", "use a shorter path")
    if exc.errno == errno.ELOOP:
        return SpecError(
            where,
            field,
            f"{named}: too many levels of symbolic links",
            "a symbolic link on this path points back to itself",
        )
    reason = exc.strerror or type(exc).__name__
    return SpecError(where, field, f"cannot read {named}: {reason}", "check the path and its permissions")


def resolve_in_root(
    relative: str, root: Path, *, at: Location, field: str, allow_outside: bool = False
) -> Path:
    """``root / relative`` with symlinks resolved; leaving ``root`` is an error unless allowed."""
    if "\x00" in relative:
        raise SpecError(at, field, f"path {shown(relative)} contains a NUL character", "fix the path")
    target = Path(os.path.realpath(root / relative))
    if not allow_outside and not target.is_relative_to(os.path.realpath(root)):
        raise SpecError(
            at,
            field,
            f"{shown(relative, 200)} is outside the repository root",
            "keep the file inside the repository, or allow it with --llmjudge-allow-outside-root",
        )
    return target


def check_regular_file(path: Path, display: str, *, label: str, at: Location, field: str) -> None:
    """Raise ``SpecError`` unless ``path`` is a regular file (the check ``read_regular_file`` makes)."""
    named = f"{label} {shown(display, 200)}"
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise _read_error(exc, named, at, field, True) from None
    except ValueError:  # a NUL in the path
        raise SpecError(at, field, f"{named}: the path contains a NUL character", "fix the path") from None
    if not stat.S_ISREG(mode):
        raise SpecError(at, field, f"{named} is not a regular file but {_kind(mode)}", "point to a text file")
