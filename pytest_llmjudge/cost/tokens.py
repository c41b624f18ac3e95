"""A call's tokens before it is made: for the pre-run estimate and for a budget's projection.

Input tokens are counted from the exact request text: by the model's tokenizer when one is at
hand (exact), else by this model's characters per token in its earlier calls, else by 4
characters a token; the last two are approximate (±20 %). Output tokens come from the history
of earlier calls (median, with minimum and maximum as the range), else from a stated default.

tiktoken (installed with pydantic-ai's OpenAI support) counts OpenAI models' tokens, but its
encodings are not in the package: its first use downloads them. Nothing here reaches the
network, so a tiktoken count is used only when the encoding is already in tiktoken's cache and
intact (a damaged one tiktoken would download again).
"""

from __future__ import annotations

import hashlib
import math
import os
import statistics
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

from .pricing import Price, cost_of, split_label

Tokenizer = Callable[[str], int]
InputBasis = Literal["tokenizer", "ratio of earlier calls", "4 characters a token"]
OutputBasis = Literal["history", "default"]

DEFAULT_CHARS_PER_TOKEN = 4.0
DEFAULT_OUTPUT_TOKENS = 100  # a {pass, reason} verdict with a sentence or two of reason
APPROXIMATE_SPREAD = 0.2  # the low–high range of an input count that is not a tokenizer's


@dataclass(frozen=True)
class TokenRange:
    """A token count with its low–high range (all three equal for an exact count)."""

    expected: int
    low: int
    high: int

    def times(self, calls: int) -> TokenRange:
        return TokenRange(self.expected * calls, self.low * calls, self.high * calls)


@dataclass(frozen=True)
class ModelTokens:
    """What is known about one model's tokens before calling it."""

    price: Price | None
    tokenizer: Tokenizer | None = None
    chars_per_token: float | None = None  # of this model's earlier calls (``chars_per_token``)
    output_history: tuple[int, ...] = ()  # output tokens of each earlier call (of this benchmark)
    default_output_tokens: int = DEFAULT_OUTPUT_TOKENS
    max_output_tokens: int | None = None  # the run's max_tokens: no answer is longer


def chars_per_token(calls: Iterable[tuple[int, int]]) -> float | None:
    """Characters per input token over earlier ``(request characters, input tokens)`` pairs of
    one model; None without any call that reported tokens."""
    chars = tokens = 0
    for request_chars, input_tokens in calls:
        if input_tokens > 0:
            chars += request_chars
            tokens += input_tokens
    return chars / tokens if tokens else None


def input_counter(model: ModelTokens) -> tuple[Callable[[str], TokenRange], InputBasis]:
    """How ``model``'s input tokens of a request text are counted, and on what basis."""
    tokenizer = model.tokenizer
    if tokenizer is not None:

        def exact(text: str) -> TokenRange:
            tokens = tokenizer(text)
            return TokenRange(tokens, tokens, tokens)

        return exact, "tokenizer"
    measured = model.chars_per_token
    ratio = measured if measured is not None and measured > 0 else DEFAULT_CHARS_PER_TOKEN

    def approximate(text: str) -> TokenRange:
        tokens = math.ceil(len(text) / ratio)
        spread = tokens * APPROXIMATE_SPREAD
        return TokenRange(tokens, math.floor(tokens - spread), math.ceil(tokens + spread))

    return approximate, "ratio of earlier calls" if ratio is measured else "4 characters a token"


def output_range(model: ModelTokens) -> tuple[TokenRange, OutputBasis]:
    """One call's output tokens, and on what basis."""
    history = model.output_history
    if history:
        return TokenRange(round(statistics.median(history)), min(history), max(history)), "history"
    default = model.default_output_tokens
    high = 2 * default if model.max_output_tokens is None else min(2 * default, model.max_output_tokens)
    return TokenRange(min(default, high), min(default // 2, high), high), "default"


def projected_call(request: str, model: ModelTokens) -> tuple[Decimal, int]:
    """What a budget reserves for one call of ``request``: the high end of its input and output
    tokens (``max_output_tokens`` when set), and their cost (0 without a price)."""
    count, _ = input_counter(model)
    tokens_in = count(request).high
    tokens_out = model.max_output_tokens or output_range(model)[0].high
    cost = cost_of(model.price, tokens_in, 0, tokens_out) if model.price is not None else Decimal(0)
    return cost, tokens_in + tokens_out


# -- tiktoken, offline -------------------------------------------------------------------------

_OPENAI_PREFIXES = {None, "openai", "openai-chat", "openai-responses", "azure", "gateway/openai"}
_ENCODINGS_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
# The file each encoding loads and its sha256, as tiktoken checks it (tiktoken_ext.openai_public).
_ENCODING_FILES = {
    "o200k_base": ("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "o200k_harmony": ("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "cl100k_base": ("cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
}


def tiktoken_cache_dir() -> Path | None:
    """Where tiktoken keeps downloaded encodings (its own rule); None when caching is off."""
    for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if name in os.environ:
            return Path(os.environ[name]) if os.environ[name] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def tokenizer_for(model_label: str) -> Tokenizer | None:
    """A token counter for an OpenAI model whose tiktoken encoding is cached on this machine,
    else None. Counts the text only: a chat request's framing adds a few tokens per message."""
    prefix, name, _ = split_label(model_label)
    if prefix not in _OPENAI_PREFIXES:
        return None
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        encoding_name = tiktoken.encoding_name_for_model(name)
    except KeyError:
        return None
    if encoding_name not in _ENCODING_FILES or not _cached_intact(*_ENCODING_FILES[encoding_name]):
        return None
    encoding = tiktoken.get_encoding(encoding_name)

    def count(text: str) -> int:
        return len(encoding.encode_ordinary(text))

    return count


def _cached_intact(file: str, sha256: str) -> bool:
    cache = tiktoken_cache_dir()
    if cache is None:
        return False
    url = _ENCODINGS_URL.format(file)
    path = cache / hashlib.sha1(url.encode()).hexdigest()  # tiktoken's name for the cached file
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False
