"""For the tests that send a subprocess Ctrl-C (SIGINT)."""

from __future__ import annotations

import signal


def ctrl_c_restored() -> None:
    """``preexec_fn`` of such a subprocess: SIGINT back at its default action.

    A suite launched as a background job (``nohup … &``) starts with SIGINT ignored, and its
    children inherit that; Python installs its ``KeyboardInterrupt`` handler only where SIGINT is at
    its default, so the subprocess would never see the Ctrl-C the test sends it.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
