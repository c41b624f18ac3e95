"""LJ000 invalid-file."""

from __future__ import annotations

from ..diagnostics import Severity
from ..rule import FileRule


class InvalidFile(FileRule):
    """
    ## What it does
    Reports a file the linter cannot load: unreadable, not UTF-8, invalid YAML, a benchmark
    that fails validation (unknown key, wrong type, a prompt or cases file that does not
    exist), or a template with invalid `{{ }}` / `{% %}` syntax. The message is the loader's
    own, at the line it points to.

    ## Why is this bad?
    The test collector rejects the same file, so nothing in it is judged; and no other rule
    can check it until it loads.

    ## Example
    ```yaml
    code: A-MED1
    treshold: 0.9
    ```

    ## Use instead
    ```yaml
    code: A-MED1
    threshold: 0.9
    ```
    """

    code = "LJ000"
    name = "invalid-file"
    severity = Severity.ERROR
    summary = "The file cannot be loaded"
