"""A pydantic ``ValidationError`` as one ``SpecError``: the most telling problem, at its line.

An unknown key comes first (often a typo that also makes a required field "missing"), with the
nearest known key; then a wrong enum value, with the nearest choice; then a missing field. A
field declared as a union (``str | list[str]``) that matched none says what it accepts instead
of listing one error per member.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import SpecError, nearest
from .text import shown
from .yamlsrc import Sourced, dotted


def _known_keys(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """Field names of the nested model that ``loc`` (ending in the unknown key) lives in."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int) or current is None:
            continue
        field = getattr(current, "model_fields", {}).get(part)
        current = _model_in(field.annotation) if field else None
    return list(getattr(current, "model_fields", {}))


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found:
            return found
    return None


def validation_error(
    exc: ValidationError, model: type[BaseModel], doc: Sourced, prefix: tuple[str | int, ...]
) -> SpecError:
    errors = exc.errors(include_url=False)
    # Prefer the most specific error: an unknown key (often a typo that also makes a required
    # field "missing"), then a wrong enum value, then a missing field, then union noise.
    # Of equal rank, the deepest: a union member's own field (``panel[1].model``) says more than
    # the member that did not match (``panel[1]`` is not a string).
    first = min(errors, key=lambda e: (_PRIORITY.get(e["type"], len(_PRIORITY)), -len(e["loc"])))
    kind = first["type"]
    raw: tuple[str | int, ...] = tuple(first["loc"])
    group, union = [first], []
    models = _model_names(model)  # a union's model member is named by its class in ``loc``
    if kind == "extra_forbidden":  # the last part is the user's key, whatever it looks like
        loc = (*(p for p in raw[:-1] if not _is_union_tag(p, models)), raw[-1])
    else:
        loc = tuple(p for p in raw if not _is_union_tag(p, models)) or raw
        base = _union_base(raw)
        members = [e for e in errors if base is not None and _union_base(tuple(e["loc"])) == base]
        if base is not None and len(members) > 1:
            group, loc = members, base
            union = list(dict.fromkeys(_UNION_KINDS[str(e["loc"][len(base)])] for e in members))
    full = (*prefix, *loc)
    field = dotted(full)
    where = doc.where(full)
    others = len(errors) - len(group)
    more = f" (and {others} more problem{'s' if others > 1 else ''})" if others else ""
    got = shown(first.get("input"), 60)
    if union:
        empty = first.get("input") is None
        hint = f"write a value after '{loc[-1]}:'" if empty and loc else _README_HINT
        return SpecError(where, field, f"expected {_either(union)} (got {got}){more}", hint)
    if kind == "extra_forbidden":
        key = str(loc[-1])
        guess = nearest(key, _known_keys(model, loc))
        hint = f"did you mean '{guess}'?" if guess else f"known keys: {', '.join(_known_keys(model, loc))}"
        return SpecError(where, field, f"unknown key {shown(key)}{more}", hint)
    if kind == "missing":
        return SpecError(where, field, f"required field is missing{more}", f"add '{loc[-1]}:' to this entry")
    if kind == "literal_error":
        expected = str(first.get("ctx", {}).get("expected", ""))
        choices = [c.strip().strip("'") for c in expected.replace(" or ", ",").split(",") if c.strip()]
        guess = nearest(str(first.get("input"))[:100], choices)
        hint = f"did you mean '{guess}'?" if guess else f"use one of: {', '.join(choices)}"
        return SpecError(where, field, f"{got} is not one of {expected}{more}", hint)
    message = first["msg"].removeprefix("Value error, ")
    if HINT_SEPARATOR in message:  # a validator's own hint
        message, hint = message.split(HINT_SEPARATOR, 1)
        return SpecError(where, field, f"{message}{more}", hint)
    if kind in {"model_type", "dict_type"}:
        message = "Input should be a mapping of keys and values"  # not "an instance of JudgeSettings"
    return SpecError(where, field, f"{message} (got {got}){more}", _HINTS.get(kind, _README_HINT))


HINT_SEPARATOR = "; hint: "  # a validator's ValueError that carries its own hint
_README_HINT = "see the 'Benchmark files' section of README.md for what each field takes"
_HINTS = {
    "string_pattern_mismatch": "use letters, digits, '-', '_' and '.', starting with a letter or digit",
    "greater_than_equal": "use a number in range",
    "less_than_equal": "use a number in range",
    "greater_than": "use a positive number",
    "float_parsing": "write a plain number such as 0.9",
    "float_type": "write a plain number such as 0.9",
    "value_error": "write a plain number such as 0.9",
    "int_parsing": "write a whole number",
    "int_type": "write a whole number",
    "int_from_float": "write a whole number",
    "bool_parsing": "write true or false",
    "bool_type": "write true or false",
    "string_type": "write text; quote it if YAML reads it as a number, date or yes/no",
    "list_type": "write a list: one '- item' line per entry, or [a, b]",
    "dict_type": "write 'key: value' lines indented under the field, or {key: value}",
    "model_type": "write 'key: value' lines indented under the field, or {key: value}",
}
_PRIORITY = {"extra_forbidden": 0, "literal_error": 1, "missing": 2}
_UNION_TAGS = {"str", "int", "float", "bool", "list", "dict", "list[str]", "dict[str,any]", "list[any]"}
_UNION_KINDS = {
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "bool": "true or false",
    "dict[str,any]": "a mapping",
    "dict": "a mapping",
    "list[any]": "a list",
    "list": "a list",
    "list[str]": "a list of strings",
}


def _is_union_tag(part: str | int, models: frozenset[str]) -> bool:
    # "[", "constrained-" and the tuple above: pydantic's own member names; ":" a ``Tag`` of a
    # discriminated union; ``models``: the class names of the file's models, members by their name
    return isinstance(part, str) and (
        "[" in part or ":" in part or part.startswith("constrained-") or part in _UNION_TAGS or part in models
    )


def _model_names(model: type[BaseModel]) -> frozenset[str]:
    """The class names of ``model`` and of every model its fields hold, however deep."""
    names: set[str] = set()
    waiting: list[Any] = [model]
    while waiting:
        annotation = waiting.pop()
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation.__name__ in names:
                continue
            names.add(annotation.__name__)
            waiting.extend(field.annotation for field in annotation.model_fields.values())
        waiting.extend(getattr(annotation, "__args__", ()))
    return frozenset(names)


def _union_base(loc: tuple[str | int, ...]) -> tuple[str | int, ...] | None:
    """The field a union error belongs to: ``loc`` up to its first union member tag."""
    for index, part in enumerate(loc):
        if isinstance(part, str) and part in _UNION_KINDS:
            return loc[:index]
    return None


def _either(kinds: list[str]) -> str:
    return kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"
