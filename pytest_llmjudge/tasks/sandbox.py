"""The one jinja2 environment for templates from users' files: sandboxed, and bounded per render.

A prompt template is data, yet jinja2 runs it as code: a plain ``Environment`` lets
``{{ cycler.__init__.__globals__.os }}`` reach the interpreter, and ``range(10**9)`` run for
hours. Templates here render in jinja2's ``ImmutableSandboxedEnvironment`` (no private
attributes, no changes to lists and dicts), and each render has budgets: loop iterations and
calls (``MAX_STEPS``), the size of each value it builds and of the text it renders
(``MAX_CHARS``), and all it builds together (``MAX_BUILT``). Going over one raises
``TemplateLimitError`` before the value is built. ``unsafe_names`` finds the private attributes
a template names, so that loading refuses the template before anything renders.
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import generate_lorem_ipsum
from jinja2.visitor import NodeTransformer

__all__ = [
    "MAX_BUILT",
    "MAX_CHARS",
    "MAX_STEPS",
    "TemplateLimitError",
    "compile_template",
    "environment",
    "render",
    "unsafe_names",
]

MAX_CHARS = 4_000_000  # characters of one value or of the rendered text: about a million tokens
MAX_BUILT = 4 * MAX_CHARS  # characters built in one render, intermediate values included
MAX_STEPS = 200_000  # loop iterations and calls in one render
_CALL_STEPS = 5  # a call (a macro's above all) costs about as much as five loop iterations
_MAX_DIGITS = 10_000  # of a number that ``*`` or ``**`` computes
_HUGE_FIELD = re.compile(  # a printf or str.format width or precision of 7 digits or more
    r"%(?:\([^)]*\))?[-+ #0]*(?:\d{7,}|\d*\.\d{7,})|\{[^{}]*:[^{}]*\d{7,}[^{}]*\}"
)
_NESTED_FIELD = re.compile(r"\{[^{}]*\{")  # ``{:{width}}``: a width given as an argument


class TemplateLimitError(jinja2.TemplateRuntimeError):
    """A render that went over one of its budgets."""


@dataclass
class _Budget:
    steps: int = 0
    built: int = 0


_BUDGET: ContextVar[_Budget | None] = ContextVar("llmjudge_template_budget", default=None)


def _budget() -> _Budget:
    return _BUDGET.get() or _Budget()  # outside ``render`` (constant folding): each check alone


def _step(steps: int = 1) -> None:
    budget = _budget()
    budget.steps += steps
    if budget.steps > MAX_STEPS:
        raise TemplateLimitError(f"more than {MAX_STEPS:,} loop iterations and calls in one render")


def _building(size: int) -> None:
    """A value of about ``size`` characters (or items) is about to be built."""
    if size > MAX_CHARS:
        raise TemplateLimitError(f"a value of {size:,} characters (the limit is {MAX_CHARS:,})")
    budget = _budget()
    budget.built += size
    if budget.built > MAX_BUILT:
        raise TemplateLimitError(f"more than {MAX_BUILT:,} characters built in one render")


def _weight(value: Any) -> int:
    """About how many characters ``str(value)`` has: counted without building it, and only up to
    just past ``MAX_CHARS`` (a list that holds one long string many times weighs them all)."""
    total = 0
    pending: list[Any] = [value]
    while pending and total <= MAX_CHARS:
        item = pending.pop()
        if isinstance(item, str | bytes):
            total += len(item) + 2
        elif isinstance(item, list | tuple | set | frozenset):
            total += len(item) + 2
            pending.extend(item)
        elif isinstance(item, Mapping):
            total += len(item) + 2
            pending.extend(item.keys())
            pending.extend(item.values())
        else:
            total += 24  # a number, None, a boolean; anything else prints its short repr
    return total


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str) else _weight(value)


def _checked(value: Any) -> Any:
    """Every ``{{ }}`` value (the environment's ``finalize``): no more text than the limit."""
    _building(_weight(value))
    return value


# -- operators, calls and filters that can build much from little -----------------------------------


def _width(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _check_binop(operator: str, left: Any, right: Any) -> None:
    if operator == "*":
        for sequence, times in ((left, right), (right, left)):
            if isinstance(sequence, str | list | tuple) and _width(times) > 0:
                _building(_size(sequence) * _width(times))
        if _width(left) and _width(right):  # squaring in a loop doubles the digits each time
            _check_digits(abs(_width(left)).bit_length() + abs(_width(right)).bit_length())
    elif operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
        _building(_size(left) + _size(right))
    elif operator == "**" and _width(left) and _width(right) > 0:
        _check_digits(abs(_width(left)).bit_length() * _width(right))
    elif operator == "%" and isinstance(left, str):
        _check_format(left)


def _check_digits(bits: int) -> None:
    digits = int(bits * 0.30103) + 1  # log10(2)
    if digits > _MAX_DIGITS:
        raise TemplateLimitError(f"a number of about {digits:,} digits (the limit is {_MAX_DIGITS:,})")


def _check_format(text: str) -> None:
    found = _HUGE_FIELD.search(text)
    if found:
        raise TemplateLimitError(f"a format field wider than {MAX_CHARS:,} characters: {found.group()!r}")


def _check_widths(*values: Any) -> None:
    for value in values:
        _building(_width(value))


def _lines(value: Any) -> int:
    return str(value).count("\n") + 1


def _check_replace(text: Any, old: Any = "", new: Any = "", *_: Any, **__: Any) -> None:
    text, old, new = str(text), str(old), str(new)
    count = text.count(old) if old else len(text) + 1
    _building(len(text) + count * len(new))


def _check_join(separator: Any, items: list[Any]) -> None:
    _building(_weight(items) + max(len(items) - 1, 0) * len(str(separator)))


# Filters that take a size: the checks see the filter's arguments after its jinja2 context one.
_FILTER_CHECKS: dict[str, Callable[..., None]] = {
    "center": lambda value, width=80, *_, **__: _check_widths(len(str(value)), width),
    "indent": lambda value, width=4, *_, **__: _building(
        len(str(value)) + _lines(value) * (_width(width) or len(str(width)))
    ),
    "batch": lambda value, linecount, *_, **__: _check_widths(linecount),
    "slice": lambda value, slices, *_, **__: _check_widths(slices),
    "replace": _check_replace,
    "format": lambda value, *_, **__: _check_format(str(value)),
    "wordwrap": lambda value, width=79, break_long_words=True, wrapstring=None, *_, **__: _building(
        len(str(value)) * (1 + len(str(wrapstring or "")))
    ),
}


def _guarded_filter(original: Callable[..., Any], check: Callable[..., None]) -> Callable[..., Any]:
    skip = 1 if getattr(original, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        check(*args[skip:], **kwargs)
        return original(*args, **kwargs)

    return guarded


def _guarded_join(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def join(eval_ctx: Any, value: Iterable[Any], d: str = "", attribute: Any = None) -> Any:
        items = list(value)
        _check_join(d, items)
        return original(eval_ctx, items, d, attribute)

    return join


def _check_str_method(method: types.BuiltinMethodType, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The checks of a ``str`` method that can build much from little; the arguments to call it
    with (an iterable to ``join`` is read once, here)."""
    text = str(method.__self__)
    name = method.__name__
    if name in {"ljust", "rjust", "center", "zfill"}:
        _check_widths(*args[:1])
    elif name == "expandtabs":
        _building(len(text) + text.count("\t") * _width(args[0] if args else 8))
    elif name == "replace":
        _check_replace(text, *args)
    elif name == "join" and args:
        items = list(args[0])
        _check_join(text, items)
        return (items, *args[1:])
    return args


def _range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_STEPS:
        raise TemplateLimitError(f"range of {len(numbers):,} numbers (the limit is {MAX_STEPS:,})")
    return numbers


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    _building(_width(n) * _width(max) * 12)
    return generate_lorem_ipsum(n, html, min, max)


# -- the environment ---------------------------------------------------------------------------------


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        _check_binop(operator, left, right)
        result = super().call_binop(context, operator, left, right)
        if operator == "%" and isinstance(result, str):  # the others were counted before
            _building(len(result))
        return result

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _step(_CALL_STEPS)
        if isinstance(__obj, types.BuiltinMethodType) and isinstance(__obj.__self__, str):
            args = _check_str_method(__obj, args)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        pattern: str = value.__self__
        _check_format(pattern)
        nested = bool(_NESTED_FIELD.search(pattern))

        @functools.wraps(wrapped)
        def format_checked(*args: Any, **kwargs: Any) -> str:
            if nested:
                _check_widths(*args, *kwargs.values())
            result = wrapped(*args, **kwargs)
            _building(len(result))
            return result

        return format_checked


class _Bounded(NodeTransformer):
    """Route every loop's items through the step count and every ``~`` through the size check."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        assert isinstance(node.iter, nodes.Expr)
        node.iter = _filter(node.iter, "llmjudge_counted", node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _filter(nodes.List(node.nodes, lineno=node.lineno), "llmjudge_concat", node.lineno)


def _filter(node: nodes.Expr, name: str, lineno: int) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=lineno)


@jinja2.pass_context
def _counted(context: jinja2.runtime.Context, items: Iterable[Any]) -> Iterator[Any]:
    for item in items:
        _step()
        yield item


@jinja2.pass_context
def _concat(context: jinja2.runtime.Context, parts: list[Any]) -> str:
    _building(sum(_weight(part) for part in parts))
    return "".join(str(part) for part in parts)


@functools.cache
def environment() -> jinja2.Environment:
    """The environment every user-supplied template renders in (its globals and filters bounded)."""
    sandbox = _BoundedSandbox(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True, finalize=_checked
    )
    sandbox.globals.update(range=_range, lipsum=_lipsum)
    for name, check in _FILTER_CHECKS.items():
        sandbox.filters[name] = _guarded_filter(sandbox.filters[name], check)
    sandbox.filters["join"] = _guarded_join(sandbox.filters["join"])
    sandbox.filters.update(llmjudge_counted=_counted, llmjudge_concat=_concat)
    return sandbox


@functools.lru_cache(maxsize=256)
def compile_template(source: str) -> jinja2.Template:
    """``source`` compiled for the bounded sandbox; raises ``jinja2.TemplateSyntaxError``."""
    tree = _Bounded().visit(environment().parse(source))
    return environment().from_string(tree)


def render(template: jinja2.Template, context: Mapping[str, Any]) -> str:
    """Render within the budgets; raises ``TemplateLimitError``, jinja2's ``SecurityError`` for an
    unsafe attribute, or what the template's own operations raise."""
    token = _BUDGET.set(_Budget())
    try:
        size = 0
        chunks: list[str] = []
        for chunk in template.generate(context):
            size += len(chunk)
            if size > MAX_CHARS:
                raise TemplateLimitError(f"the rendered text is over {MAX_CHARS:,} characters")
            chunks.append(chunk)
        return "".join(chunks)
    finally:
        _BUDGET.reset(token)


def unsafe_names(source: str) -> list[tuple[str, int]]:
    """The private attributes ``source`` names (``x.__class__``, ``x['__globals__']``,
    ``x|attr('__init__')``), with their template lines: the sandbox would refuse them when
    rendering; loading refuses them at once. Raises ``jinja2.TemplateSyntaxError``."""
    found: list[tuple[str, int]] = []
    for node in environment().parse(source).find_all((nodes.Getattr, nodes.Getitem, nodes.Filter)):
        name: Any = None
        if isinstance(node, nodes.Getattr):
            name = node.attr
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            name = node.arg.value
        elif isinstance(node, nodes.Filter) and node.name == "attr" and node.args:
            first = node.args[0]
            name = first.value if isinstance(first, nodes.Const) else None
        if isinstance(name, str) and "__" in name:
            found.append((name, node.lineno))
    return sorted(found, key=lambda item: item[1])
