"""Line-aware YAML loading: safe loader only, every value keeps its line and column.

The loader composes the node tree with PyYAML's ``SafeLoader`` (no Python tags), then builds
plain Python values while recording where each one came from, so that validation errors can
point at the exact line. Alias expansion is bounded, which refuses "billion laughs" files at
once instead of exhausting memory; so is nesting depth, checked before the file is composed
(``nesting``). Lines are counted as an editor counts them: YAML also breaks lines at NEL and
the Unicode line separators, which would shift every line number after one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import Location, SpecError
from .nesting import MAX_DEPTH, yaml_depth_bound
from .text import LineIndex, escape, shown

Path = tuple[str | int, ...]

MAX_NODES = 200_000
_MERGE_TAG = "tag:yaml.org,2002:merge"
_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:omap"}
# What YAML refuses in a stream: controls (except tab and line ends), DEL, C1 controls but NEL,
# surrogates, U+FFFE and U+FFFF. Found first, so that the error names the line, not a traceback.
_NOT_YAML = re.compile(r"[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_YAML_ONLY_BREAKS = ("\x85", "\u2028", "\u2029")
_INT_BITS = 14_000  # about 4,200 decimal digits: Python refuses to print longer integers


@dataclass
class Sourced:
    """A loaded YAML document with the location of every value, keyed by its path."""

    path: str
    data: Any
    marks: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def where(self, path: Path) -> Location:
        """Location of ``path``, or of its closest ancestor that has one."""
        probe = tuple(path)
        while probe:
            if probe in self.marks:
                line, col = self.marks[probe]
                return Location(self.path, line, col)
            probe = probe[:-1]
        line, col = self.marks.get((), (1, 1))
        return Location(self.path, line, col)


def dotted(path: Path) -> str:
    """``("cases", 2, "id")`` → ``cases[2].id``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def decode(raw: bytes, path: str) -> str:
    """UTF-8 text of a file, with a clear error for other encodings."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError(
            Location(path, line, col),
            "",
            f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
            "save the file as UTF-8",
        ) from None


# Nodes are told apart by ``node.id``, not isinstance: libyaml keeps the node classes of the
# first ``yaml`` import, which differ from a re-imported module's (pytester in-process runs).
def _kind(node: Any) -> str:
    return str(node.id)  # "mapping", "sequence" or "scalar"


class _Lines:
    """Editor line and column of a YAML mark (PyYAML and libyaml count NEL, U+2028 and U+2029
    as line breaks; editors and this plugin's messages do not)."""

    def __init__(self, text: str) -> None:
        self.index = LineIndex(text) if any(ch in text for ch in _YAML_ONLY_BREAKS) else None

    def __call__(self, mark: Any) -> tuple[int, int]:
        if self.index is None:
            return mark.line + 1, mark.column + 1
        return self.index.position(mark.index)


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, path: str, lines: _Lines) -> None:
        self.loader = loader
        self.path = path
        self.lines = lines
        self.marks: dict[Path, tuple[int, int]] = {}
        self.count = 0
        self.open: set[int] = set()  # collections being built: an alias to one of them never ends

    def build(self, node: yaml.Node, where: Path) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self._error(
                node,
                where,
                f"document expands to more than {MAX_NODES} values (alias bomb?)",
                "remove the nested YAML aliases (*name) that multiply the document",
            )
        self.marks.setdefault(where, self.lines(node.start_mark))
        if _kind(node) == "scalar":
            return self._scalar(node, where)
        if id(node) in self.open:
            raise self._error(
                node,
                where,
                "a YAML alias inside its own anchor (&name ... *name) makes a value that never ends",
                "refer to the anchor only after the value it names",
            )
        if len(self.open) >= MAX_DEPTH:  # aliases can nest what the text does not
            raise self._error(
                node,
                where,
                f"values nest more than {MAX_DEPTH} levels deep",
                "flatten the structure; benchmarks and cases need only a few levels",
            )
        self.open.add(id(node))
        try:
            return self._collection(node, where)
        finally:
            self.open.discard(id(node))

    def _collection(self, node: yaml.Node, where: Path) -> Any:
        if _kind(node) in {"mapping", "sequence"} and node.tag not in _PLAIN_TAGS:
            raise self._error(
                node,
                where,
                f"unsupported YAML tag {shown(node.tag)}",
                "only plain YAML is loaded (safe loader); remove the tag",
            )
        if _kind(node) == "mapping":
            out: dict[Any, Any] = {}
            key_lines: dict[Any, int] = {}
            merges = [value for key, value in node.value if key.tag == _MERGE_TAG]
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self._scalar(key_node, where)
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise self._error(key_node, where, "mapping keys must be plain scalars", "quote the key")
                if key in out:
                    first = key_lines[key]
                    raise self._error(
                        key_node,
                        (*where, str(key)),
                        f"duplicate key '{key}' (first defined on line {first})",
                        "keep one of the two entries",
                    )
                key_lines[key] = self.lines(key_node.start_mark)[0]
                child = (*where, key if isinstance(key, str) else str(key))
                self.marks[child] = self.lines(key_node.start_mark)
                out[key] = self.build(value_node, child)
            for merged in merges:
                self._merge(out, merged, where)
            return out
        return [self.build(item, (*where, i)) for i, item in enumerate(node.value)]

    def _merge(self, out: dict[Any, Any], merged: yaml.Node, where: Path) -> None:
        """Apply a ``<<: *anchor`` merge key: the mapping's own keys win, then earlier sources.

        Sources are built like any other value (so they count towards ``MAX_NODES``) instead of
        PyYAML's ``flatten_mapping``, which copies merged entries without bound and reports
        an overridden merged key as a duplicate.
        """
        sources = merged.value if _kind(merged) == "sequence" else [merged]
        own = {key: mark for key, mark in self.marks.items() if key[: len(where)] == where}
        for source in sources:
            if _kind(source) != "mapping":
                raise self._error(
                    source,
                    where,
                    "a merge key '<<' takes a mapping or a list of mappings",
                    "merge an anchored mapping: '<<: *name'",
                )
            for key, value in self.build(source, where).items():
                out.setdefault(key, value)
        self.marks.update(own)

    def _scalar(self, node: yaml.Node, where: Path) -> Any:
        if _kind(node) != "scalar":
            return self.build(node, where)
        try:
            value = self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            raise self._error(
                node,
                where,
                f"unsupported YAML tag {shown(node.tag)}",
                "only plain YAML is loaded (safe loader); remove the tag",
            ) from exc
        except (ValueError, OverflowError) as exc:  # 5,000 digits; a 30th of February
            raise self._unreadable(node, where, str(exc).split(";")[0]) from None
        if isinstance(value, int) and value.bit_length() > _INT_BITS:  # 0x and 1:2:3 forms
            raise self._unreadable(node, where, "too large")
        return value

    def _unreadable(self, node: yaml.Node, where: Path, reason: str) -> SpecError:
        kind = _TAG_NAMES.get(node.tag, "a value")
        return self._error(
            node,
            where,
            f"cannot read {shown(node.value, 40)} as {kind}: {reason}",
            "quote it to keep it as text",
        )

    def _error(self, node: yaml.Node, where: Path, message: str, hint: str) -> SpecError:
        line, col = self.lines(node.start_mark)
        return SpecError(Location(self.path, line, col), dotted(where), message, hint)


_TAG_NAMES = {
    "tag:yaml.org,2002:int": "a whole number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:timestamp": "a date",
    "tag:yaml.org,2002:binary": "binary data",
}


class _Unparsable(Exception):
    """The fast parser failed; the pure-Python one parses again to word the error."""


# libyaml parses about eight times faster, with the same nodes and marks; a file it rejects is
# parsed again by the pure-Python parser so that error messages do not depend on libyaml.
_FAST_LOADER: type[yaml.SafeLoader] | None = getattr(yaml, "CSafeLoader", None)


def load_yaml(text: str, path: str) -> Sourced:
    """Parse one YAML document into plain values with the location of each."""
    lines = _Lines(text)
    _refuse_characters(text, path)
    _refuse_deep_nesting(text, path, lines)
    if _FAST_LOADER is not None:
        try:
            return _load(text, path, lines, _FAST_LOADER, fast=True)
        except _Unparsable:
            pass
    return _load(text, path, lines, yaml.SafeLoader)


def _refuse_characters(text: str, path: str) -> None:
    found = _NOT_YAML.search(text)
    if found:
        line, col = LineIndex(text).position(found.start())
        raise SpecError(
            Location(path, line, col),
            "",
            f"invalid YAML: character {shown(found.group())} (U+{ord(found.group()):04X}) is not allowed",
            f"delete it; inside double quotes, write it as {escape(found.group())}",
        )


def _refuse_deep_nesting(text: str, path: str, lines: _Lines) -> None:
    """Composing a document recurses once per level (in C for libyaml): count levels first."""
    if yaml_depth_bound(text) <= MAX_DEPTH:
        return
    try:
        mark = _too_deep_event((_FAST_LOADER or yaml.SafeLoader)(text))
    except yaml.YAMLError:
        # libyaml's scanner looks ahead and may stop at its own nesting limit before the parser
        # reaches ours; PyYAML's parser recurses. Its scanner does not: count the tokens.
        try:
            mark = _too_deep_token(yaml.SafeLoader(text))
        except yaml.YAMLError:
            return  # loading reports the syntax error, met before the composer nests too deep
    if mark is not None:
        raise SpecError(
            Location(path, *lines(mark)),
            "",
            f"values nest more than {MAX_DEPTH} levels deep",
            "flatten the structure; benchmarks and cases need only a few levels",
        )


_OPENING_EVENTS = {"MappingStartEvent", "SequenceStartEvent"}
_CLOSING_EVENTS = {"MappingEndEvent", "SequenceEndEvent"}
_OPENING_TOKENS = {
    "FlowSequenceStartToken",
    "FlowMappingStartToken",
    "BlockSequenceStartToken",
    "BlockMappingStartToken",
}
_CLOSING_TOKENS = {"FlowSequenceEndToken", "FlowMappingEndToken", "BlockEndToken"}


def _too_deep_event(loader: yaml.SafeLoader) -> yaml.Mark | None:
    """The mark of the first event past ``MAX_DEPTH`` levels, or None."""
    return _too_deep(loader, loader.check_event, loader.get_event, _OPENING_EVENTS, _CLOSING_EVENTS)


def _too_deep_token(loader: yaml.SafeLoader) -> yaml.Mark | None:
    """As ``_too_deep_event`` from PyYAML's scanner, which loops where its parser recurses.

    A sequence written at its key's indentation has no token of its own, so this count can only
    fall short of the parser's, never pass it.
    """
    return _too_deep(loader, loader.check_token, loader.get_token, _OPENING_TOKENS, _CLOSING_TOKENS)


def _too_deep(
    loader: yaml.SafeLoader,
    more: Callable[[], bool],
    take: Callable[[], Any],
    opening: set[str],
    closing: set[str],
) -> yaml.Mark | None:
    depth = 0
    try:
        while more():
            item = take()
            kind = type(item).__name__
            depth += (kind in opening) - (kind in closing)
            if depth > MAX_DEPTH:
                return item.start_mark  # type: ignore[no-any-return]
        return None
    finally:
        loader.dispose()


def _load(
    text: str, path: str, lines: _Lines, loader_class: type[yaml.SafeLoader], fast: bool = False
) -> Sourced:
    loader = loader_class(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            if fast:
                raise _Unparsable from None
            raise _syntax_error(exc, text, path, lines) from None
        if node is None:
            return Sourced(path, None, {(): (1, 1)})
        builder = _Builder(loader, path, lines)
        data = builder.build(node, ())
        return Sourced(path, data, builder.marks)
    finally:
        loader.dispose()


def _syntax_error(exc: yaml.YAMLError, text: str, path: str, lines: _Lines) -> SpecError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark and (mark is None or mark.index >= len(text.rstrip())):
            # "found unexpected end of stream": the unclosed bracket or quote is the place to fix
            mark = exc.context_mark
        line, col = lines(mark) if mark else (1, 1)
        problem = exc.problem or str(exc)
        if exc.context:
            problem = f"{problem} ({exc.context})"
        return SpecError(
            Location(path, line, col),
            "",
            f"invalid YAML: {problem}",
            "check indentation, colons and quotes on this line and the one above",
        )
    return SpecError(Location(path, 1, 1), "", f"invalid YAML: {exc}", "fix the YAML syntax")
