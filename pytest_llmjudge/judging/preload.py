"""What a judge call may import, imported before the first call starts, on the main thread.

Imported on the scheduler's thread instead, every file it reads hands the GIL to a main thread
busy collecting and waits up to 5 ms to get it back (0.1 s of imports took 0.35 s and held back the
first call); and a Ctrl-C inside an import the scheduler's thread makes is harder to handle.
"""

from __future__ import annotations


def load_judging() -> None:
    """pydantic-evals' LLMJudge, the text-verdict reader, the pairwise judge and the renderer."""
    from . import llmjudge, pairwise_judge, rendering, verdict_text  # noqa: F401

    llmjudge.load_llmjudge()
