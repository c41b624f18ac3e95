"""What a model's tokens cost: prices from ``genai-prices`` (pydantic's, bundled in the package;
never fetched), ``--llmjudge-price MODEL=IN/OUT`` overrides, and the local judge at no cost.

The cost of a call is genai-prices' own calculation for the call's usage, so cached-input, tiered
and time-of-day prices come out as the provider bills them. A price is per request (a tier is
chosen by one request's input tokens), so a call of several requests is priced request by request
(``cost_of_requests``). This module keeps no price table of its own.
"""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, Provider

PriceSource = Literal["genai-prices", "--llmjudge-price", "local (free)"]
PRICE_OPTION = "--llmjudge-price"
_MILLION = Decimal(1_000_000)
_LOCAL_PREFIX = "local:"
# pydantic-ai's in-process test models: never priced, and not worth loading the price data for
_NEVER_PRICED = frozenset({"function", "test"})


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model, and where the figures come from.

    ``model`` is the judge or task label the price is for; ``provider`` and ``model_ref`` are what
    genai-prices matched (its provider id and the model name looked up), None for the other
    sources. A tiered price shows its base rate here; ``cost_of`` applies the tiers.
    """

    model: str
    provider: str | None
    input_mtok: Decimal
    cached_input_mtok: Decimal | None
    output_mtok: Decimal
    source: PriceSource
    model_ref: str | None = None
    tiered: bool = False
    batch: bool = False  # every request at the provider's batch rate (``--llmjudge-batch``)

    @property
    def free(self) -> bool:
        return self.source == "local (free)"

    def describe(self) -> str:
        """A line for the summary and the estimate: ``$0.15/$0.6 per Mtok in/out (genai-prices: openai)``."""
        cached = f", cached in ${self.cached_input_mtok}" if self.cached_input_mtok is not None else ""
        tiers = ", tiered by input size" if self.tiered else ""
        origin = f"{self.source}: {self.provider}" if self.provider else self.source
        return f"${self.input_mtok}/${self.output_mtok} per Mtok in/out{cached}{tiers} ({origin})"


def parse_price_option(text: str) -> tuple[str, float, float]:
    """``MODEL=IN/OUT`` (USD per million input and output tokens) → ``(MODEL, IN, OUT)``.

    The model is everything before the last ``=``, so a label with ``=`` in it still parses.
    Raises ``ValueError`` with a message naming the option and the value.
    """
    model, equals, prices = text.strip().rpartition("=")
    model = model.strip()
    expected = (
        f"{PRICE_OPTION} {text!r}: expected MODEL=IN/OUT, USD per million input and output tokens "
        "(e.g. openai:my-model=0.15/0.60)"
    )
    if not equals or not model:
        raise ValueError(expected)
    given_in, slash, given_out = prices.partition("/")
    if not slash or "/" in given_out:
        raise ValueError(expected)
    return model, _price_number(given_in, "input", text), _price_number(given_out, "output", text)


def _price_number(text: str, side: str, option: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError(
            f"{PRICE_OPTION} {option!r}: the {side} price {text.strip()!r} is not a number"
        ) from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{PRICE_OPTION} {option!r}: the {side} price must be a finite number ≥ 0")
    return value


def split_label(label: str) -> tuple[str | None, str, str | None]:
    """``(provider prefix, model name, base URL)`` of a judge or task label:
    ``openai:gpt-4o-mini`` → ``("openai", "gpt-4o-mini", None)``,
    ``openai:NAME@http://host:8000/v1`` → ``("openai", "NAME", "http://host:8000/v1")``,
    ``gpt-4o-mini`` → ``(None, "gpt-4o-mini", None)``."""
    rest, at, url = label.rpartition("@")
    base_url = url if at and url.startswith(("http://", "https://")) else None
    if base_url is None:
        rest = label
    prefix, colon, name = rest.partition(":")
    if not colon or ("/" in prefix and not prefix.startswith("gateway/")):
        return None, rest, base_url
    return prefix, name, base_url


def price_for(
    model_label: str,
    base_url: str | None = None,
    overrides: Mapping[str, tuple[float, float]] | None = None,
) -> Price | None:
    """The price of ``model_label``'s tokens, or None when no source knows it.

    In order: a ``--llmjudge-price`` override (keyed by the label, the label without its
    ``@URL``, or the bare model name); a ``local:`` judge, free; genai-prices. genai-prices is
    asked by the base URL's provider when it knows the host (``base_url``, or the ``@URL`` of the
    label), else by the label's provider prefix (``openai:``, ``anthropic:``, ``google-gla:`` …;
    also for a server it does not know, as pydantic-ai does), else by model name alone. A
    provider prefix genai-prices does not know (``ollama:``, ``vllm:``, ``test:``) has no price:
    a self-hosted or resold model is not priced as someone else's.
    """
    prefix, name, label_url = split_label(model_label)
    override = _override(model_label, name, overrides or {})
    if override is not None:
        given_in, given_out = override
        return Price(model_label, None, _decimal(given_in), None, _decimal(given_out), "--llmjudge-price")
    if model_label == "local" or model_label.startswith(_LOCAL_PREFIX):
        return Price(model_label, None, Decimal(0), Decimal(0), Decimal(0), "local (free)")
    if prefix in _NEVER_PRICED or not name:
        return None
    found = _genai_lookup(prefix, name, base_url or label_url)
    if found is None:
        return None
    provider, info = found
    return _from_genai(model_label, name, provider, info)


def _override(
    label: str, name: str, overrides: Mapping[str, tuple[float, float]]
) -> tuple[float, float] | None:
    without_url = label.rpartition("@")[0] if "@http" in label else label
    for key in (label, without_url, name):
        if key in overrides:
            return overrides[key]
    return None


def _decimal(value: float) -> Decimal:
    return Decimal(repr(value))  # 0.15 → Decimal('0.15'), not the binary float's expansion


def _genai_lookup(prefix: str | None, name: str, base_url: str | None) -> tuple[Provider, ModelInfo] | None:
    from genai_prices.data_snapshot import find_provider_by_id, get_snapshot

    snapshot = get_snapshot()
    if base_url:
        try:
            provider = snapshot.find_provider(None, None, _api_url(base_url))
        except LookupError:
            pass  # a server genai-prices does not know: the provider prefix decides
        else:
            return _model_of(provider, name, snapshot.providers)
    if prefix is not None:
        known = find_provider_by_id(snapshot.providers, prefix)  # it reads gateway/openai as openai
        return _model_of(known, name, snapshot.providers) if known is not None else None
    try:
        return snapshot.find_provider_model(name, None, None, None)
    except LookupError:
        return None


def _api_url(base_url: str) -> str:
    """genai-prices matches API URLs with the scheme; one given without it is taken as https."""
    url = base_url.strip()
    return url if urllib.parse.urlsplit(url).scheme else f"https://{url}"


def _model_of(provider: Provider, name: str, providers: list[Provider]) -> tuple[Provider, ModelInfo] | None:
    info = provider.find_model(name, all_providers=providers)
    return (provider, info) if info is not None else None


def _from_genai(label: str, name: str, provider: Provider, info: ModelInfo) -> Price:
    from genai_prices.types import TieredPrices

    now = datetime.now().astimezone()
    prices = info.get_prices(now)
    parts = (prices.input_mtok, prices.cache_read_mtok, prices.output_mtok)
    tiered = any(isinstance(part, TieredPrices) for part in parts)
    base = [part.base if isinstance(part, TieredPrices) else part for part in parts]
    return Price(
        label,
        provider.id,
        base[0] if base[0] is not None else Decimal(0),
        base[1],
        base[2] if base[2] is not None else Decimal(0),
        "genai-prices",
        model_ref=name,
        tiered=tiered,
    )


def cost_of(
    price: Price,
    input_tokens: int,
    cached_input_tokens: int,
    output_tokens: int,
    *,
    cache_write_tokens: int = 0,
    at: datetime | None = None,
    batch: bool = False,
) -> Decimal:
    """USD for one request's usage. ``input_tokens`` counts all input tokens, the cached ones
    (``cached_input_tokens``, pydantic-ai's ``cache_read_tokens``) included, as pydantic-ai and
    genai-prices count them. A genai-prices price is genai-prices' own calculation (tiers, cached
    and cache-write rates, prices in force at ``at``, default now; a ``batch`` request at the
    provider's batch rate); an override charges cached tokens at the input rate. Raises
    ``ValueError`` for counts that cannot be one request's usage.
    """
    counts = (input_tokens, cached_input_tokens, output_tokens, cache_write_tokens)
    if any(count < 0 for count in counts) or cached_input_tokens + cache_write_tokens > input_tokens:
        raise ValueError(
            f"usage of {price.model} is not one request's usage: {input_tokens} input tokens, "
            f"{cached_input_tokens} cached, {cache_write_tokens} cache-write, {output_tokens} output"
        )
    if price.free:
        return Decimal(0)
    if price.source != "genai-prices":
        return (input_tokens * price.input_mtok + output_tokens * price.output_mtok) / _MILLION
    from genai_prices import Usage, calc_price

    usage = Usage(
        input_tokens=input_tokens,
        cache_read_tokens=cached_input_tokens,
        cache_write_tokens=cache_write_tokens,
        output_tokens=output_tokens,
    )
    return calc_price(
        usage,
        price.model_ref or price.model,
        provider_id=price.provider,
        genai_request_timestamp=at,
        price_context={"processing": "batch"} if batch or price.batch else None,
    ).total_price


@dataclass(frozen=True)
class RequestTokens:
    """One request's token counts, as pydantic-ai's ``RequestUsage`` reports them."""

    input_tokens: int
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    batch: bool = False  # processed by the provider's batch API (``processing: batch``)


def cost_of_requests(
    price: Price, requests: Iterable[RequestTokens], *, at: datetime | None = None
) -> Decimal:
    """USD for a call of several requests (retries, output validation rounds), each priced alone:
    summing the counts first would put a call past a tier that none of its requests reached."""
    return sum(
        (
            cost_of(
                price,
                r.input_tokens,
                r.cached_input_tokens,
                r.output_tokens,
                cache_write_tokens=r.cache_write_tokens,
                at=at,
                batch=r.batch,
            )
            for r in requests
        ),
        Decimal(0),
    )


def unpriced_message(model_label: str) -> str:
    """Said once per model with no known price: its tokens are counted, its cost is not."""
    return (
        f"no price known for {model_label} (genai-prices does not list it): tokens are counted, "
        f"cost is not; set one with {PRICE_OPTION} {model_label}=IN/OUT (USD per million tokens)"
    )


def format_usd(amount: Decimal | float) -> str:
    """``$1,234.50``, ``$0.50``, ``$0.00018``: cents from a dollar up, below it up to 6 decimals."""
    value = Decimal(str(amount)) if isinstance(amount, float) else amount
    if abs(value) >= 1:
        return f"${value:,.2f}"
    shown = f"{value.quantize(Decimal('0.000001')):f}".rstrip("0")
    whole, _, decimals = shown.partition(".")
    return f"${whole}.{decimals.ljust(2, '0')}"
