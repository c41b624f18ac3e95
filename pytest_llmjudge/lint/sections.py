"""Where sections of a prompt file start and end, for messages and for fixes that insert text."""

from __future__ import annotations

from ..suite.prompt_file import CANONICAL_ORDER, Heading
from ..suite.prompt_syntax import TITLES as TITLES  # re-exported for the rules
from ..suite.prompt_syntax import forms as forms
from .documents import PromptDocument

REQUIRED = tuple(key for key in CANONICAL_ORDER if key not in {"inputs", "output_instruction"})
_SEPARATORS = {"", "---", "***", "___"}


def first_headings(prompt: PromptDocument) -> dict[str, Heading]:
    """The first heading of each section key, in file order."""
    found: dict[str, Heading] = {}
    for heading in prompt.sections.headings:
        found.setdefault(heading.key, heading)
    return found


def section_end(prompt: PromptDocument, heading: Heading) -> int:
    """The last line with content that belongs to the section opened by ``heading``."""
    later = [h.line for h in prompt.sections.headings if h.line > heading.line]
    end = (min(later) - 1) if later else len(prompt.lines)
    while end > heading.line and prompt.line(end).strip() in _SEPARATORS:
        end -= 1
    return end


def neighbours(present: dict[str, Heading], key: str) -> tuple[str | None, str | None]:
    """The present sections just before and just after ``key`` in canonical order."""
    index = CANONICAL_ORDER.index(key)
    before = next((k for k in reversed(CANONICAL_ORDER[:index]) if k in present), None)
    after = next((k for k in CANONICAL_ORDER[index + 1 :] if k in present), None)
    return before, after


def placement(present: dict[str, Heading], key: str) -> str:
    """Where ``key`` belongs, in words: "after 'DESCRIPTION'" or "before 'RUBRIC'"."""
    before, after = neighbours(present, key)
    if before:
        return f"after {TITLES[before]}"
    return f"before {TITLES[after]}" if after else "in the file"


def several_behaviors(prompt: PromptDocument) -> bool:
    """True when a BEHAVIOR, Automatic fail or Pass conditions heading appears twice (LJ013's finding).

    The parser merges the repeated sections, so rules about one section's content stay quiet.
    """
    keys = [
        h.key for h in prompt.sections.headings if h.key in {"behavior", "automatic_fail", "pass_conditions"}
    ]
    return len(keys) != len(set(keys))
