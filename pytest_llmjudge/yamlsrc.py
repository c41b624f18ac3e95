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
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and node.tag not in _PLAIN_TAGS:
            raise self._error(
                node, where, f"unsupported YAML tag {node.tag!r}", "only plain YAML is loaded (safe loader); remove the tag"
            )
        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)
            out: dict[Any, Any] = {}
            key_lines: dict[Any, int] = {}
            for key_node, value_node in node.value:
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
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*where, i)) for i, item in enumerate(node.value)]
        return self._scalar(node, where)

    def _scalar(self, node: yaml.Node, where: Path) -> Any:
        if not isinstance(node, yaml.ScalarNode):
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


def load_yaml(text: str, path: str) -> Sourced:
    """Parse one YAML document into plain values with the location of each."""
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
            problem = exc.problem or str(exc)
            if exc.context:
                problem = f"{problem} ({exc.context})"
            raise SpecError(
                Location(path, line, col),
                "",
                f"invalid YAML: {problem}",
                "check indentation, colons and quotes on this line and the one above",
            ) from None
        except yaml.YAMLError as exc:
            raise SpecError(Location(path, 1, 1), "", f"invalid YAML: {exc}", "fix the YAML syntax") from None
        if node is None:
            return Sourced(path, None, {(): (1, 1)})
        builder = _Builder(loader, path)
        data = builder.build(node, ())
        return Sourced(path, data, builder.marks)
    finally:
        loader.dispose()
