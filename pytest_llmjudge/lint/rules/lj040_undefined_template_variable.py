"""LJ040 undefined-template-variable."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..documents import TemplateDocument
from ..rule import TemplateRule


class UndefinedTemplateVariable(TemplateRule):
    """
    ## What it does
    In a prompt-template YAML file (`prompt.template` with `prompt.template_variables`, or a
    model task's `messages:` list with `template_variables`), finds a `{{ variable }}` a
    template uses but `template_variables` does not declare. A template that a benchmark's
    `task:` renders may leave `template_variables` out: its variables are the case's fields,
    checked when the suite is collected.

    ## Why is this bad?
    Callers provide exactly the declared variables. An undeclared one renders as an error
    under strict rendering, or, under lenient rendering, as an empty string: the judge then
    evaluates a prompt with a hole where the response or the context should be.

    ## Example
    ```yaml
    prompt:
      template: "Context: {{context_document}}\\nResponse: {{response}}"
      template_variables:
        - context_document
    ```

    ## Use instead
    ```yaml
    prompt:
      template: "Context: {{context_document}}\\nResponse: {{response}}"
      template_variables:
        - context_document
        - response
    ```
    """

    code = "LJ040"
    name = "undefined-template-variable"
    severity = Severity.ERROR
    summary = "The template uses a variable that template_variables does not declare"

    def check(self, template: TemplateDocument) -> Iterable[Diagnostic]:
        if template.variables is None and template.for_task:
            return
        declared = set(template.variables or ())
        for name in template.used:
            if name not in declared:
                where = template.usage(name)
                message = f"template uses '{{{{{name}}}}}' but template_variables does not declare '{name}'"
                yield self.diagnostic(template.display, where.line, where.col, message)
