"""LJ041 unused-template-variable."""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from ..documents import TemplateDocument
from ..rule import TemplateRule


class UnusedTemplateVariable(TemplateRule):
    """
    ## What it does
    In a prompt-template YAML file (`prompt:` or a model task's `messages:`), finds a name in
    `template_variables` that no template uses.

    ## Why is this bad?
    Callers compute and pass a value the judge never sees. It usually means the template lost
    a placeholder in an edit (the judge no longer gets the user query, say) or the variable
    was renamed on one side only.

    ## Example
    ```yaml
    prompt:
      template: "Context: {{context_document}}\\nResponse: {{response}}"
      template_variables: [user_request, context_document, response]
    ```

    ## Use instead
    ```yaml
    prompt:
      template: "Query: {{user_request}}\\nContext: {{context_document}}\\nResponse: {{response}}"
      template_variables: [user_request, context_document, response]
    ```
    """

    code = "LJ041"
    name = "unused-template-variable"
    severity = Severity.WARNING
    summary = "template_variables declares a variable the template never uses"

    def check(self, template: TemplateDocument) -> Iterable[Diagnostic]:
        used = set(template.used)
        for index, name in enumerate(template.variables or ()):
            if name not in used:
                where = template.source.where((*template.variables_key, index))
                message = f"template_variables declares '{name}' but the template never uses it"
                yield self.diagnostic(template.display, where.line, where.col, message)
