"""Looking rules up by code and turning ``select`` / ``ignore`` lists into the set of codes to run."""

from __future__ import annotations

from collections.abc import Iterable

from .rule import Rule
from .rules import ALL_RULES

_BY_CODE = {rule.code: rule for rule in ALL_RULES}
_DEFAULT = frozenset(rule.code for rule in ALL_RULES if not rule.opt_in)


class SelectionError(ValueError):
    """A code or prefix in ``select`` / ``ignore`` that matches no rule."""


def all_rules() -> tuple[Rule, ...]:
    return ALL_RULES


def get_rule(code: str) -> Rule:
    """The rule with ``code`` (or kebab-case name); ``SelectionError`` if there is none."""
    key = code.strip()
    found = _BY_CODE.get(key.upper()) or next((r for r in ALL_RULES if r.name == key.lower()), None)
    if found is None:
        raise SelectionError(f"unknown rule '{code}'")
    return found


def expand(patterns: Iterable[str], opt_in: bool = False) -> frozenset[str]:
    """Codes matched by codes, code prefixes (``LJ0``), rule names or ``ALL``.

    When selecting, opt-in rules match only their exact code or name, never a prefix or
    ``ALL``; ``opt_in=True`` (ignoring) lets prefixes match them too.
    """
    pool = frozenset(_BY_CODE) if opt_in else _DEFAULT
    codes: set[str] = set()
    for pattern in patterns:
        key = pattern.strip()
        if not key:
            continue
        if key.upper() == "ALL":
            codes.update(pool)
            continue
        exact = {r.code for r in ALL_RULES if key.upper() == r.code or key.lower() == r.name}
        matched = exact or {c for c in pool if c.startswith(key.upper())}
        if not matched:
            raise SelectionError(f"'{pattern}' matches no rule (see 'llmjudge rules')")
        codes.update(matched)
    return frozenset(codes)


def selected(select: Iterable[str] | None, ignore: Iterable[str]) -> frozenset[str]:
    """The codes to run: ``select`` (every rule but the opt-in ones when None) minus ``ignore``.

    LJ000 (a file that cannot be loaded) runs unless ignored by name: a narrow ``select`` must
    not turn a broken file into a clean one.
    """
    chosen = expand(select) if select is not None else _DEFAULT
    return (chosen | {"LJ000"}) - expand(ignore, opt_in=True)
