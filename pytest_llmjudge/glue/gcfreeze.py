"""Keep a collected suite out of the cyclic garbage collector's way.

A thousand collected cases are tens of thousands of long-lived objects (items, compiled
requests, validated benchmark models). Every full collection during the run walks them again,
and so does the last one when the interpreter exits: about 0.3 s of a 1,000-case run
(``bench/throughput.py``). Once collection is over, ``freeze`` moves everything alive into the
permanent generation (``gc.freeze``); what the run creates afterwards is collected as usual.
Frozen objects are released when the process ends, without the final collection, so a session
nested in another process's session (pytester's in-process runs) thaws them at its end instead.

While the suite is collected the collector is off (``pause``): collection imports pydantic-evals
and pydantic-ai and builds every case, all of it long-lived, and the collector's passes over it
took 0.14 s of a 1,000-case run's start, on the way to its first judge call. ``resume`` turns it
back on before the first item runs, collects the young objects once (so that the collection's own
cyclic garbage is not frozen) and freezes the rest.
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


def pause() -> bool:
    """Freeze what is alive now and turn the collector off; False when it is off already (the
    user's choice, left as it is)."""
    if not freeze():
        return False
    gc.disable()
    return True


def resume(paused: bool) -> bool:
    """The collector back on if ``pause`` turned it off, the young garbage collected and what is
    alive frozen; False when the collector is off."""
    if paused and not gc.isenabled():
        gc.enable()
        gc.collect(0)
    return freeze()


def closed(session: object, frozen: bool, paused: bool = False) -> None:
    """``session`` ends; a nested one hands what it froze back to the collector, and one whose
    collection stopped before its items ran turns the collector back on."""
    if paused and not gc.isenabled():
        gc.enable()
    if session in _open:
        _open.remove(session)
    if frozen and _open:
        gc.unfreeze()
