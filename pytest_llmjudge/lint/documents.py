"""The files a lint run reads, loaded once into frozen values the rules inspect.

A prompt file keeps its raw lines next to its parsed sections, because fixes rewrite lines and
diagnostics point at columns. A benchmark file is loaded through ``spec.load_benchmark`` so that
the linter and the test collector agree on what a valid benchmark is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta

from ..suite.errors import Location, SpecError
from ..suite.files import Benchmark, load_benchmark, read_text
from ..suite.prompt_file import Bullet, PromptSections, parse_prompt, split_lines
from ..suite.task_spec import ModelTaskSpec
from ..suite.yamlsrc import Sourced, load_yaml
from ..tasks.prompt_template import parse_prompt_template

_BULLET_START = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_COMMENT_ONLY = re.compile(r"^\s*<!--.*-->\s*$")
_EXAMPLE_LINE = re.compile(r"^\s*(?:[-*•]\s+)?(?:e\.g\.|example)\s*:", re.IGNORECASE)


class Kind(StrEnum):
    """What a linted file is; decides which rules see it."""

    PROMPT = "prompt"
    BENCHMARK = "benchmark"
    TEMPLATE = "template"


@dataclass(frozen=True)
class PromptDocument:
    """A judge prompt file: raw lines (1-based via ``line()``) and parsed sections."""

    path: Path
    display: str
    text: str
    lines: tuple[str, ...]
    sections: PromptSections

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def bullet_lines(self, bullet: Bullet) -> list[tuple[int, str]]:
        """The raw lines of ``bullet`` without its example lines or trailing prose paragraphs."""
        out: list[tuple[int, str]] = []
        blank = False
        for number in range(bullet.line, max(bullet.line, bullet.end_line) + 1):
            raw = self.line(number)
            if not raw.strip() or _COMMENT_ONLY.match(raw):
                blank = blank or not raw.strip()
                continue
            if number > bullet.line and (_EXAMPLE_LINE.match(raw) or (blank and not raw[:1].isspace())):
                break
            blank = False
            out.append((number, raw))
        return out


@dataclass(frozen=True)
class BenchmarkDocument:
    """A benchmark file, validated; ``source`` keeps the line of every key."""

    path: Path
    display: str
    text: str
    source: Sourced
    benchmark: Benchmark

    def where(self, *keys: str | int) -> Location:
        return self.source.where(keys)


@dataclass(frozen=True)
class TemplateDocument:
    """A prompt-template YAML file: ``prompt.template`` + ``prompt.template_variables``, or a
    model task's ``messages:`` list (``for_task``: a file a benchmark's ``task:`` renders)."""

    path: Path
    display: str
    text: str
    source: Sourced
    templates: tuple[str, ...]
    template_key: tuple[str, ...]
    variables: tuple[str, ...] | None
    variables_key: tuple[str, ...]
    used: tuple[str, ...]
    for_task: bool = False  # its variables are the case's fields: declaring them is optional

    def usage(self, name: str) -> Location:
        """Where ``name`` is first used in the file, or where the template starts."""
        found = re.search(r"\{[{%][^}]*?\b" + re.escape(name) + r"\b", self.text)
        if not found:
            return self.source.where(self.template_key)
        line = self.text.count("\n", 0, found.start()) + 1
        return Location(self.display, line, found.start() - (self.text.rfind("\n", 0, found.start()) + 1) + 1)


Document = PromptDocument | BenchmarkDocument | TemplateDocument


def load_prompt(path: Path, display: str) -> PromptDocument:
    text = read_text(path, display)
    return PromptDocument(path, display, text, tuple(split_lines(text)), parse_prompt(text, display))


def yaml_kind(data: Any) -> Kind | None:
    """Which kind of YAML file ``data`` is, or None for files the linter leaves alone (rubrics, notes)."""
    if not isinstance(data, dict):
        return None
    prompt = data.get("prompt")
    if (isinstance(prompt, dict) and "template" in prompt) or "template" in data:
        return Kind.TEMPLATE
    if is_chat_template(data):
        return Kind.TEMPLATE
    if "code" in data and "benchmarks" not in data:
        return Kind.BENCHMARK
    return None


def is_chat_template(data: Any) -> bool:
    """A ``messages:`` list of role/content templates (a model task's conversation)? Other YAML
    may have a ``messages`` key (translations, say): one entry must look like a message."""
    if not isinstance(data, dict) or "code" in data:
        return False
    prompt = data.get("prompt")
    messages = prompt.get("messages") if isinstance(prompt, dict) else data.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and ("role" in m or "content" in m) for m in messages
    )


def load_yaml_document(
    path: Path, display: str, root: Path, allow_outside: bool = False, task_template: bool = False
) -> BenchmarkDocument | TemplateDocument | None:
    """A benchmark or template document, or None when the YAML file is neither.

    A ``task_template`` (named by a benchmark's ``task: {prompt_file: ...}``) and a ``messages:``
    file are read as a model task reads them, so the linter reports what collection would refuse.
    """
    text = read_text(path, display)
    source = load_yaml(text, display)
    if task_template or is_chat_template(source.data):
        return _task_template_document(path, display, text, source)
    kind = yaml_kind(source.data)
    if kind is Kind.BENCHMARK:
        benchmark = load_benchmark(path, display, root, allow_outside=allow_outside)
        return BenchmarkDocument(path, display, text, source, benchmark)
    if kind is Kind.TEMPLATE:
        return _template_document(path, display, text, source)
    return None


def _template_document(path: Path, display: str, text: str, source: Sourced) -> TemplateDocument:
    data = source.data
    assert isinstance(data, dict)
    prompt = data.get("prompt")
    holder, prefix = (
        (prompt, ("prompt",)) if isinstance(prompt, dict) and "template" in prompt else (data, ())
    )
    template = holder.get("template")
    if not isinstance(template, str):
        raise SpecError(
            source.where((*prefix, "template")), "template", "template must be a string", "quote it"
        )
    declared = holder.get("template_variables")
    if declared is not None and not (
        isinstance(declared, list) and all(isinstance(v, str) for v in declared)
    ):
        raise SpecError(
            source.where((*prefix, "template_variables")),
            "template_variables",
            "template_variables must be a list of names",
            "write one '- name' line per variable",
        )
    try:
        used = meta.find_undeclared_variables(jinja2.Environment().parse(template))
    except jinja2.TemplateSyntaxError as exc:
        where = source.where((*prefix, "template"))
        raise SpecError(
            where, "template", f"invalid template: {exc.message}", "check the {{ }} and {% %} tags"
        ) from None
    return TemplateDocument(
        path=path,
        display=display,
        text=text,
        source=source,
        templates=(template,),
        template_key=(*prefix, "template"),
        variables=tuple(declared) if declared is not None else None,
        variables_key=(*prefix, "template_variables"),
        used=tuple(sorted(used)),
    )


def _task_template_document(path: Path, display: str, text: str, source: Sourced) -> TemplateDocument:
    template = parse_prompt_template(source)
    return TemplateDocument(
        path=path,
        display=display,
        text=text,
        source=source,
        templates=tuple(message.template for message in template.messages),
        template_key=template.template_key,
        variables=template.declared,
        variables_key=template.variables_key,
        used=template.used,
        for_task=True,
    )


def task_prompt_file(benchmark: Benchmark, root: Path) -> Path | None:
    """The prompt-template file a benchmark's model task renders, or None."""
    task = benchmark.spec.task
    return root / task.prompt_file if isinstance(task, ModelTaskSpec) else None


def is_bullet_start(raw: str) -> bool:
    return bool(_BULLET_START.match(raw))
