"""A bound on nesting depth, checked before a document is parsed.

YAML and JSON parsers build nested values recursively: libyaml's composer in C (30,000 nested
``[`` crash the interpreter), PyYAML's and ``json`` in Python (``RecursionError`` long before
that). No benchmark or case needs more than a few levels, so documents deeper than
``MAX_DEPTH`` are refused at the line where the limit is crossed.
"""

from __future__ import annotations

import re

MAX_DEPTH = 100
# A string token (whose brackets do not count) or a bracket.
_JSON_TOKEN = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{}]', re.DOTALL)
# The indentation and block indicators ("- ", "? ", ": ") that open each line; YAML also ends
# lines at NEL and the Unicode separators.
_BLOCK_LEAD = re.compile(r"(?:^|[\r\n\x85\u2028\u2029])([ \t?:-]*)")


def json_too_deep(text: str) -> int | None:
    """Offset in the JSON ``text`` of the bracket that passes ``MAX_DEPTH``, or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        mark = token.group()[0]
        if mark in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return token.start()
        elif mark in "]}":
            depth -= 1
    return None


def yaml_depth_bound(text: str) -> int:
    """A cheap upper bound of the nesting depth of the YAML ``text``.

    Flow collections open at a ``[`` or ``{``. A block collection nested in another starts on a
    later column, except a sequence under a mapping key, which may share the key's column: block
    depth is at most twice the widest run of indentation and indicators that opens a line.
    """
    flow = text.count("[") + text.count("{")
    lead = max(map(len, _BLOCK_LEAD.findall(text)), default=0)
    return flow + 2 * (lead + 1)
