"""Prompt-template files for model tasks: loading them at their lines, rendering them per case.

The prompt_templates library's layout puts everything under ``prompt:``: ``template`` (one user
message) or ``messages`` (a list of ``{role, content}`` templates: a whole conversation),
``template_variables`` (or its older name ``input_variables``), ``metadata``,
``client_parameters`` and ``custom_data``. The flat layout, with ``messages:`` or those keys at
the top level beside ``prompt: {template}``, loads too. Templates are jinja2, rendered in a
bounded sandbox (``sandbox``) with ``StrictUndefined``: a variable the case lacks is an error
naming the fields it has, never an empty hole in the prompt.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import jinja2
from jinja2 import meta
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..suite.errors import SpecError, nearest
from ..suite.files import read_yaml
from ..suite.hashing import digest
from ..suite.validation import validation_error
from ..suite.yamlsrc import Sourced, dotted
from . import sandbox
from .few_shot import Example
from .fields import case_fields

__all__ = [
    "FileFormat",
    "PromptTemplate",
    "RenderedMessage",
    "TemplateFieldError",
    "TemplateMessage",
    "TemplateRenderError",
    "case_fields",
    "load_prompt_template",
    "parse_prompt_template",
    "render_messages",
]

Role = Literal["system", "user", "assistant"]
Key = tuple[str | int, ...]
EXAMPLES = "examples"  # the variable that receives the few-shot examples, when a template names it
_FORMATS_HINT = "write 'prompt: {template: ...}' or 'prompt: {messages: [{role: user, content: ...}]}'"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Message(_Strict):
    role: Role
    content: str


class _Common(_Strict):
    template_variables: list[str] | None = None
    metadata: dict[str, Any] | None = None
    client_parameters: dict[str, Any] | None = None
    custom_data: dict[str, Any] | None = None


class _Layer(_Common):
    """What a file holds at its top level and, in the prompt_templates library's layout, under
    ``prompt:``; the library's own files put everything under ``prompt:``."""

    messages: Annotated[list[_Message], Field(min_length=1)] | None = None


class _PromptBody(_Layer):
    template: str | None = None
    input_variables: list[str] | None = None  # the library's older name for template_variables


class _File(_Layer):
    prompt: _PromptBody | None = None


# The same layouts for the JSON schema: one variant each, so that an editor flags a file with
# both 'template' and 'messages', or neither, as the loader does.
class _TemplatePrompt(_Common):
    template: str
    input_variables: list[str] | None = None


class _ChatPrompt(_Common):
    messages: Annotated[list[_Message], Field(min_length=1)]
    input_variables: list[str] | None = None


class _PromptFile(_Common):
    prompt: _TemplatePrompt | _ChatPrompt


class _ChatFile(_Common):
    messages: Annotated[list[_Message], Field(min_length=1)]


FileFormat: TypeAlias = _PromptFile | _ChatFile  # the file's layouts, for ``llmjudge schema``


@dataclass(frozen=True)
class TemplateMessage:
    """One message template; ``line`` is where its template starts in the file."""

    role: str
    template: str
    line: int


@dataclass(frozen=True)
class RenderedMessage:
    role: str
    content: str


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded prompt-template file; ``digest`` identifies its content (not its layout)."""

    display: str
    messages: tuple[TemplateMessage, ...]
    declared: tuple[str, ...] | None  # ``template_variables``; None when the file declares none
    client_parameters: tuple[tuple[str, Any], ...]
    digest: str
    template_key: tuple[str, ...] = ("prompt", "template")  # where the templates are (for the linter)
    variables_key: tuple[str, ...] = ("prompt", "template_variables")

    @property
    def used(self) -> tuple[str, ...]:
        """The variables the templates name, sorted."""
        return tuple(sorted(set().union(*(_variables(m.template) for m in self.messages))))


class TemplateRenderError(Exception):
    """A template that cannot be rendered with a case's fields."""


class TemplateFieldError(TemplateRenderError):
    """A template names a variable that the case (or a few-shot example) does not have."""

    def __init__(self, variable: str, available: tuple[str, ...], example: str | None = None) -> None:
        self.variable = variable
        self.available = available
        self.example = example
        owner = "the case" if example is None else f"few-shot example '{example}'"
        has = ", ".join(available) if available else "no fields"
        super().__init__(f"template variable '{variable}' is not a field of {owner} (it has: {has})")


@functools.lru_cache(maxsize=256)
def _variables(source: str) -> frozenset[str]:
    return frozenset(meta.find_undeclared_variables(sandbox.environment().parse(source)))


# -- loading ---------------------------------------------------------------------------------------


def load_prompt_template(path: Path, display: str) -> PromptTemplate:
    """Read and validate a prompt-template file; mistakes raise ``SpecError`` at their line."""
    return parse_prompt_template(read_yaml(path, display))


def parse_prompt_template(doc: Sourced) -> PromptTemplate:
    """Validate a loaded prompt-template document (the linter has it loaded already)."""
    data = doc.data
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {type(data).__name__}"
        raise SpecError(doc.where(()), "", f"expected a prompt-template mapping, got {got}", _FORMATS_HINT)
    if "messages" in data and "prompt" in data:
        raise SpecError(
            doc.where(("messages",)),
            "messages",
            "a prompt-template file has either 'prompt:' or 'messages:', not both",
            "keep one of the two",
        )
    if "messages" not in data and "prompt" not in data:
        raise _no_template(data, doc)
    loaded: _File = _validate(_File, data, doc)
    layers: list[tuple[Key, _Layer]] = [((), loaded)]
    if loaded.prompt is not None:
        layers.append((("prompt",), loaded.prompt))
    messages, keys, template_key = _messages(loaded, doc)
    for message, key in zip(messages, keys, strict=True):
        _check_syntax(message.template, doc, key)
    declared, variables_key = _only_one(layers, ("template_variables", "input_variables"), doc)
    parameters, _ = _only_one(layers, ("client_parameters",), doc)
    _only_one(layers, ("metadata",), doc)
    _only_one(layers, ("custom_data",), doc)
    client_parameters = tuple(sorted((parameters or {}).items()))
    declared_names = tuple(declared) if declared is not None else None
    identity = {
        "messages": [[m.role, m.template] for m in messages],
        "declared": declared_names,
        "client_parameters": client_parameters,
    }
    return PromptTemplate(
        doc.path,
        messages,
        declared_names,
        client_parameters,
        digest(identity),
        template_key,
        tuple(map(str, variables_key or (*template_key[:-1], "template_variables"))),
    )


def _messages(loaded: _File, doc: Sourced) -> tuple[tuple[TemplateMessage, ...], list[Key], tuple[str, ...]]:
    """The file's message templates, the key of each, and the key that holds them all."""
    body = loaded.prompt
    if body is None and loaded.messages is not None:
        return (*_chat(loaded.messages, ("messages",), doc), ("messages",))
    if body is not None and body.messages is not None:
        if body.template is not None:
            raise SpecError(
                doc.where(("prompt", "messages")),
                "prompt.messages",
                "'prompt:' has either 'template:' or 'messages:', not both",
                "keep one of the two",
            )
        return (*_chat(body.messages, ("prompt", "messages"), doc), ("prompt", "messages"))
    if body is None or body.template is None:
        raise SpecError(
            doc.where(("prompt", "template")),
            "prompt.template",
            "required field is missing",
            "write 'template: ...' (one user message) or 'messages: [...]' under 'prompt:'",
        )
    line = doc.where(("prompt", "template")).line
    return (TemplateMessage("user", body.template, line),), [("prompt", "template")], ("prompt", "template")


def _chat(
    chat: list[_Message], key: tuple[str, ...], doc: Sourced
) -> tuple[tuple[TemplateMessage, ...], list[Key]]:
    keys: list[Key] = [(*key, i, "content") for i in range(len(chat))]
    messages = tuple(
        TemplateMessage(m.role, m.content, doc.where(k).line) for m, k in zip(chat, keys, strict=True)
    )
    if not any(m.role == "user" for m in messages):
        raise SpecError(
            doc.where(key),
            dotted(key),
            "no message has role 'user'",
            "add '- {role: user, content: ...}' with the case's fields",
        )
    return messages, keys


def _only_one(
    layers: list[tuple[Key, _Layer]], names: tuple[str, ...], doc: Sourced
) -> tuple[Any, Key | None]:
    """The value given under one of ``names`` (at the top level or under ``prompt:``) and its key;
    a value given twice is an error at the second."""
    found = [
        ((*prefix, name), getattr(layer, name))
        for prefix, layer in layers
        for name in names
        if getattr(layer, name, None) is not None
    ]
    if len(found) > 1:
        (first, _), (second, _) = found[:2]
        raise SpecError(
            doc.where(second),
            dotted(second),
            f"given as '{dotted(first)}' as well",
            f"keep one of '{dotted(first)}' and '{dotted(second)}'",
        )
    return (found[0][1], found[0][0]) if found else (None, None)


def _validate(model: type[_Strict], data: dict[str, Any], doc: Sourced) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, model, doc, ()) from None


def _no_template(data: dict[str, Any], doc: Sourced) -> SpecError:
    for key in data:
        guess = nearest(str(key), ("prompt", "messages"))
        if guess:
            return SpecError(
                doc.where((str(key),)), str(key), f"unknown key '{key}'", f"did you mean '{guess}'?"
            )
    return SpecError(doc.where(()), "", "no template: neither 'prompt:' nor 'messages:'", _FORMATS_HINT)


def _check_syntax(template: str, doc: Sourced, key: tuple[str | int, ...]) -> None:
    """A template that does not parse, or that names a private attribute, is refused at its line."""
    try:
        _variables(template)
        unsafe = sandbox.unsafe_names(template)
    except jinja2.TemplateSyntaxError as exc:
        raise SpecError(
            doc.where(key),
            dotted(key),
            f"invalid template: {exc.message}{_template_line(exc.lineno)}",
            "check the {{ }} and {% %} tags",
        ) from None
    if unsafe:
        name, line = unsafe[0]
        raise SpecError(
            doc.where(key),
            dotted(key),
            f"the template reads the private attribute '{name}'{_template_line(line)}, "
            "which a sandboxed template may not",
            "use only the case's fields and their values; templates cannot reach Python internals",
        )


def _template_line(line: int | None) -> str:
    return f" (template line {line})" if line and line > 1 else ""


# -- rendering -------------------------------------------------------------------------------------


def render_messages(
    template: PromptTemplate, fields: Mapping[str, Any], examples: Sequence[Example] = ()
) -> tuple[RenderedMessage, ...]:
    """The messages the model sees for one case.

    Few-shot examples go into the ``examples`` variable when a template names it (a list of
    each example's fields plus ``output``); otherwise each becomes a user message, rendered from
    the last user template with the example's fields, and an assistant message with its output,
    placed before the last user message.
    """
    context = dict(fields)
    if EXAMPLES in template.used and (examples or EXAMPLES not in fields):
        context[EXAMPLES] = [{**example.fields, "output": example.output} for example in examples]
        return tuple(_render(message, context) for message in template.messages)
    rendered = [_render(message, context) for message in template.messages]
    if not examples:
        return tuple(rendered)
    last_user = max(i for i, m in enumerate(template.messages) if m.role == "user")
    shots: list[RenderedMessage] = []
    for example in examples:
        shots.append(_render(template.messages[last_user], example.fields, example.id))
        shots.append(RenderedMessage("assistant", output_text(example.output)))
    return (*rendered[:last_user], *shots, *rendered[last_user:])


def output_text(output: Any) -> str:
    """An example's output as an assistant message: text as is, anything else compact JSON."""
    if isinstance(output, str):
        return output
    return json.dumps(output, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _render(
    message: TemplateMessage, context: Mapping[str, Any], example: str | None = None
) -> RenderedMessage:
    available = tuple(sorted(context))
    for name in sorted(_variables(message.template)):
        if name not in context:
            raise TemplateFieldError(name, available, example)
    try:
        content = sandbox.render(sandbox.compile_template(message.template), context)
    except jinja2.TemplateError as exc:  # a missing key below a field, an unsafe attribute, a limit
        raise _render_error(message, example, exc.message or type(exc).__name__) from None
    except (TypeError, ValueError, LookupError, ArithmeticError) as exc:  # ``{{ text + 1 }}``
        raise _render_error(message, example, f"{type(exc).__name__}: {exc}") from None
    except RecursionError:  # a macro that calls itself without end
        raise _render_error(message, example, "a macro or loop recursed too deeply") from None
    return RenderedMessage(message.role, content)


def _render_error(message: TemplateMessage, example: str | None, reason: str) -> TemplateRenderError:
    owner = "" if example is None else f" for few-shot example '{example}'"
    return TemplateRenderError(f"{message.role} message (line {message.line}){owner}: {reason}")
