"""Keep a collected suite out of the cyclic garbage collector's way.

A thousand collected cases are tens of thousands of long-lived objects (items, compiled
requests, validated benchmark models). Every full collection during the run walks them again,
and so does the last one when the interpreter exits: about 0.3 s of a 1,000-case run
(``bench/throughput.py``). Once collection is over, ``freeze`` moves everything alive into the
permanent generation (``gc.freeze``); what the run creates afterwards is collected as usual.
Frozen objects are released when the process ends, without the final collection, so a session
nested in another process's session (pytester's in-process runs) thaws them at its end instead.
"""

from __future__ import annotations

import gc

_open: list[object] = []  # sessions of this process; more than one while one runs inside another


def opened(session: object) -> None:
    _open.append(session)


def freeze() -> bool:
    """Freeze what is alive now; False when the collector is off (nothing to spare it)."""
    if not gc.isenabled():
        return False
    gc.freeze()
    return True


def closed(session: object, frozen: bool) -> None:
    """``session`` ends; a nested one hands what it froze back to the collector."""
    if session in _open:
        _open.remove(session)
    if frozen and _open:
        gc.unfreeze()
