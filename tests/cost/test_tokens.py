"""Tokens before a call: the ratio of earlier calls, a budget's projection, and tiktoken counts
only from an encoding already on this machine (nothing downloads)."""

from __future__ import annotations

import hashlib
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
import tiktoken

from pytest_llmjudge.cost.pricing import cost_of, price_for
from pytest_llmjudge.cost.tokens import (
    ModelTokens,
    TokenRange,
    chars_per_token,
    input_counter,
    output_range,
    projected_call,
    tiktoken_cache_dir,
    tokenizer_for,
)


@pytest.fixture(autouse=True)
def _no_download(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))

    def refuse(name: str) -> None:
        raise AssertionError(f"tiktoken would load (and download) {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", refuse)


def test_an_encoding_not_on_this_machine_gives_no_tokenizer() -> None:
    assert tokenizer_for("openai:gpt-4o-mini") is None


class _Words:
    """An encoding that makes one token of each word (tiktoken's real files are megabytes)."""

    def encode_ordinary(self, text: str) -> list[int]:
        return [len(word) for word in text.split()]


def _cache_encoding(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: bytes, expected: bytes) -> None:
    """A cached o200k_base file holding ``content``, where ``expected`` is the intact file."""
    from pytest_llmjudge.cost import tokens

    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(content)
    intact = ("o200k_base", hashlib.sha256(expected).hexdigest())
    monkeypatch.setattr(tokens, "_ENCODING_FILES", {"o200k_base": intact})
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: _Words() if name == "o200k_base" else None)


def test_an_intact_cached_encoding_counts_tokens_with_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _cache_encoding(monkeypatch, tmp_path, b"the encoding", b"the encoding")
    count = tokenizer_for("openai:gpt-4o-mini")
    assert count is not None
    assert count("three short words") == 3
    assert tokenizer_for("anthropic:claude-sonnet-4-5") is None  # tiktoken counts OpenAI models only


def test_the_same_encoding_damaged_gives_no_tokenizer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _cache_encoding(monkeypatch, tmp_path, b"the encoding, cut sho", b"the encoding")
    assert tokenizer_for("openai:gpt-4o-mini") is None


def test_a_damaged_cached_encoding_gives_no_tokenizer(tmp_path: Path) -> None:
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"not an encoding")
    assert tokenizer_for("openai:gpt-4o-mini") is None


@pytest.mark.parametrize(
    "label", ["anthropic:claude-sonnet-4-5", "openai:llama3@http://h:1/v1", "local:gemma"]
)
def test_models_tiktoken_does_not_know_give_no_tokenizer(label: str) -> None:
    assert tokenizer_for(label) is None


def test_the_cache_directory_follows_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tiktoken_cache_dir() is None
    assert tokenizer_for("openai:gpt-4o-mini") is None


def test_the_ratio_comes_from_calls_that_reported_tokens() -> None:
    assert chars_per_token([(4000, 1000), (300, 100), (999, 0)]) == 4300 / 1100
    assert chars_per_token([(10, 0)]) is None
    assert chars_per_token([]) is None


def test_a_projection_reserves_the_high_end_of_a_call() -> None:
    price = price_for("openai:gpt-4o-mini", None, {})
    assert price is not None
    request = "x" * 400  # 100 tokens at 4 characters a token, 120 at the high end
    cost, tokens = projected_call(request, ModelTokens(price, output_history=(20, 90)))
    assert (cost, tokens) == (cost_of(price, 120, 0, 90), 120 + 90)
    cost, tokens = projected_call(request, ModelTokens(price, max_output_tokens=64, output_history=(20, 90)))
    assert (cost, tokens) == (cost_of(price, 120, 0, 64), 120 + 64)  # max_tokens bounds every answer
    assert projected_call(request, ModelTokens(None)) == (Decimal(0), 120 + 200)


def test_a_call_of_one_token_counts_toward_the_ratio() -> None:
    assert chars_per_token([(40, 1)]) == 40.0


def test_tiktoken_s_older_cache_variable_and_its_default_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", "/somewhere/gym")
    assert tiktoken_cache_dir() == Path("/somewhere/gym")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", "")
    assert tiktoken_cache_dir() is None
    monkeypatch.delenv("DATA_GYM_CACHE_DIR")
    assert tiktoken_cache_dir() == Path(tempfile.gettempdir()) / "data-gym-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/first")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", "/second")
    assert tiktoken_cache_dir() == Path("/first")


def test_a_model_with_less_than_a_character_a_token_keeps_its_own_ratio() -> None:
    count, basis = input_counter(ModelTokens(None, chars_per_token=0.5))
    assert basis == "ratio of earlier calls" and count("x" * 10).expected == 20


def test_an_odd_default_answer_and_a_generous_max_tokens() -> None:
    output, basis = output_range(ModelTokens(None, default_output_tokens=101, max_output_tokens=250))
    assert basis == "default" and output == TokenRange(101, 50, 202)  # twice the default, under max_tokens
