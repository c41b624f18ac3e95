"""Writing an output file: whole or not at all, under a lock where runs merge into one file, and
never over a file it must not replace (a Python file, a benchmark, the input it was made from) or
over anything that is not a regular file (a device, a FIFO, a link to one: renaming over it would
replace it).

Every output of the plugin (results file, HTML report, review file, stored calibration) is
written through ``write_text``: a unique temporary file beside the target, renamed over it, so a
full disk or a crash leaves the old file or none, never half a file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

LOCK_TIMEOUT_S = 60.0
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class RefusedTarget(OSError):
    """The target is a file an output must not replace; the message says what it is."""


@dataclass(frozen=True)
class Guard:
    """What an output must not write over: any Python file, and ``protected`` (resolved path →
    what it is, e.g. "a benchmark file"). ``flag`` is the option that allows it anyway."""

    protected: Mapping[Path, str] = field(default_factory=dict)
    flag: str = "--force"
    overwrite: bool = False

    def refusal(self, path: Path) -> str | None:
        """Why ``path`` must not be written over, or None."""
        if self.overwrite or not path.is_file():
            return None
        target = path.resolve()
        what = self.protected.get(target)
        if what is None and ".py" in {path.suffix, target.suffix}:
            what = "a Python file"
        if what is None:
            return None
        return f"it is {what} (pass {self.flag} to write over it)"


def write_text(path: Path, text: str, *, replace: bool = True, guard: Guard | None = None) -> None:
    """Write ``text`` to ``path`` (its folder made): into a temporary file beside it, renamed over it.

    ``replace`` False writes only where no file is yet (``FileExistsError`` otherwise). A target
    the ``guard`` refuses raises ``RefusedTarget``; every failure is an ``OSError`` and leaves the
    target as it was.
    """
    check(path, guard)
    make_folder(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    # os.open with 0o666 keeps the user's umask (mkstemp would make the output private)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if replace:
            os.replace(temporary, path)
        else:
            _link_new(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)  # gone already after a replace


def special_kind(path: Path) -> str | None:
    """What is at ``path`` (links followed) when it is neither a regular file nor a folder, e.g.
    "a character device"; None when it is one of those, or nothing is there."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # nothing there, a file in the way, a NUL in the name
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def check(path: Path, guard: Guard | None) -> None:
    """Raise before anything is written when ``path`` cannot or must not be written: a folder is
    there, something other than a regular file is (``RefusedTarget``), or the ``guard`` refuses it."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    kind = special_kind(path)
    if kind is not None:
        raise RefusedTarget(f"it is {kind}, not a regular file")
    reason = guard.refusal(path) if guard is not None else None
    if reason is not None:
        raise RefusedTarget(reason)


def make_folder(folder: Path) -> None:
    """Make ``folder`` and its parents; a file in the way is ``NotADirectoryError`` naming it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocking = blocking_file(folder) or folder
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(blocking)) from None


def blocking_file(folder: Path) -> Path | None:
    """The file that stops ``folder`` being made: ``folder`` or its nearest existing parent, when
    that is not a folder; None when the folder is there or can be made."""
    for path in (folder, *folder.parents):
        if path.exists():
            return None if path.is_dir() else path
    return None


def _link_new(temporary: Path, path: Path) -> None:
    """Give ``temporary``'s content the name ``path``, which must not exist yet."""
    try:
        os.link(temporary, path)
    except OSError as error:
        if isinstance(error, FileExistsError):
            raise
        # a file system without hard links: claim the name, then rename over it
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.replace(temporary, path)


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive lock on ``.<name>.lock`` beside ``path`` (``fcntl.flock``) while runs read,
    merge and write ``path``; ``TimeoutError`` after ``timeout`` seconds of waiting. No lock where
    there is no fcntl (Windows)."""
    if sys.platform == "win32":
        yield
        return
    import fcntl

    make_folder(path.parent)
    lock = path.with_name(f".{path.name}.lock")  # stays: removing it would let two runs lock apart
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"another run held {lock} for {timeout:g} s") from None
                time.sleep(0.02)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock
