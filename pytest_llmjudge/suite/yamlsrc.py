"""Line-aware YAML loading: safe loader only, every value keeps its line and column.

The loader composes the node tree with PyYAML's ``SafeLoader`` (no Python tags), then builds
plain Python values while recording where each one came from, so that validation errors can
point at the exact line. Alias expansion is bounded, which refuses "billion laughs" files at
once instead of exhausting memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import Location, SpecError

Path = tuple[str | int, ...]

MAX_NODES = 200_000
_MERGE_TAG = "tag:yaml.org,2002:merge"
_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:omap"}


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


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, path: str) -> None:
        self.loader = loader
        self.path = path
        self.marks: dict[Path, tuple[int, int]] = {}
        self.count = 0

    def build(self, node: yaml.Node, where: Path) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            mark = node.start_mark
            raise SpecError(
                Location(self.path, mark.line + 1, mark.column + 1),
                dotted(where),
                f"document expands to more than {MAX_NODES} values (alias bomb?)",
                "remove the nested YAML aliases (*name) that multiply the document",
            )
        self.marks.setdefault(where, (node.start_mark.line + 1, node.start_mark.column + 1))
        if _kind(node) in {"mapping", "sequence"} and node.tag not in _PLAIN_TAGS:
            raise self._error(
                node,
                where,
                f"unsupported YAML tag {node.tag!r}",
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
                key_lines[key] = key_node.start_mark.line + 1
                child = (*where, key if isinstance(key, str) else str(key))
                self.marks[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                out[key] = self.build(value_node, child)
            for merged in merges:
                self._merge(out, merged, where)
            return out
        if _kind(node) == "sequence":
            return [self.build(item, (*where, i)) for i, item in enumerate(node.value)]
        return self._scalar(node, where)

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
            return self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            raise self._error(
                node,
                where,
                f"unsupported YAML tag {node.tag!r}",
                "only plain YAML is loaded (safe loader); remove the tag",
            ) from exc

    def _error(self, node: yaml.Node, where: Path, message: str, hint: str) -> SpecError:
        mark = node.start_mark
        return SpecError(Location(self.path, mark.line + 1, mark.column + 1), dotted(where), message, hint)


class _Unparsable(Exception):
    """The fast parser failed; the pure-Python one parses again to word the error."""


# libyaml parses about eight times faster, with the same nodes and marks; a file it rejects is
# parsed again by the pure-Python parser so that error messages do not depend on libyaml.
_FAST_LOADER: type[yaml.SafeLoader] | None = getattr(yaml, "CSafeLoader", None)


def load_yaml(text: str, path: str) -> Sourced:
    """Parse one YAML document into plain values with the location of each."""
    if _FAST_LOADER is not None:
        try:
            return _load(text, path, _FAST_LOADER, fast=True)
        except _Unparsable:
            pass
    return _load(text, path, yaml.SafeLoader)


def _load(text: str, path: str, loader_class: type[yaml.SafeLoader], fast: bool = False) -> Sourced:
    loader = loader_class(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            if fast:
                raise _Unparsable from None
            raise _syntax_error(exc, text, path) from None
        if node is None:
            return Sourced(path, None, {(): (1, 1)})
        builder = _Builder(loader, path)
        data = builder.build(node, ())
        return Sourced(path, data, builder.marks)
    finally:
        loader.dispose()


def _syntax_error(exc: yaml.YAMLError, text: str, path: str) -> SpecError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark and (mark is None or mark.index >= len(text.rstrip())):
            # "found unexpected end of stream": the unclosed bracket or quote is the place to fix
            mark = exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
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
