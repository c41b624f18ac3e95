"""Prices come from genai-prices (or an override, or the local judge's nothing), and a call's cost
is genai-prices' own calculation for its usage."""

from __future__ import annotations

from datetime import UTC
from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price
from genai_prices.data_snapshot import get_snapshot
from genai_prices.types import TieredPrices

from pytest_llmjudge.cost.pricing import (
    Price,
    RequestTokens,
    cost_of,
    cost_of_requests,
    format_usd,
    parse_price_option,
    price_for,
    split_label,
    unpriced_message,
)


def priced(label: str, base_url: str | None = None) -> Price:
    price = price_for(label, base_url, {})
    assert price is not None, label
    return price


def test_the_bundled_prices_are_used_never_fetched_ones() -> None:
    assert not get_snapshot().from_auto_update


def test_gpt_4o_mini_costs_what_genai_prices_says() -> None:
    price = priced("openai:gpt-4o-mini")
    assert (price.provider, price.source, price.model_ref) == ("openai", "genai-prices", "gpt-4o-mini")
    expected = calc_price(Usage(input_tokens=1000, output_tokens=50), "gpt-4o-mini", provider_id="openai")
    assert cost_of(price, 1000, 0, 50) == expected.total_price == Decimal("0.00018")


def test_cached_input_tokens_are_priced_at_the_cached_rate() -> None:
    price = priced("openai:gpt-4o-mini")
    expected = calc_price(
        Usage(input_tokens=1000, cache_read_tokens=600, output_tokens=50), "gpt-4o-mini", provider_id="openai"
    ).total_price
    assert cost_of(price, 1000, 600, 50) == expected
    assert expected < cost_of(price, 1000, 0, 50)
    assert price.cached_input_mtok is not None and price.cached_input_mtok < price.input_mtok


def _a_tiered_model() -> tuple[str, str, int]:
    """(provider id, model id, input tokens past its first tier) of a model with tiered input prices."""
    for provider in get_snapshot().providers:
        for model in provider.models:
            prices = model.prices
            if not isinstance(prices, list) and isinstance(prices.input_mtok, TieredPrices):
                return provider.id, model.id, prices.input_mtok.tiers[0].start + 1000
    pytest.skip("this genai-prices has no tiered model")


def test_tiered_prices_follow_genai_prices_per_request() -> None:
    provider, model, past_tier = _a_tiered_model()
    price = priced(f"{provider}:{model}")
    assert price.tiered
    expected = calc_price(Usage(input_tokens=past_tier, output_tokens=10), model, provider_id=provider)
    assert cost_of(price, past_tier, 0, 10) == expected.total_price
    # two requests of half the size each stay below the tier: summed first, they would not
    half = RequestTokens(past_tier // 2, 0, 5)
    assert cost_of_requests(price, [half, half]) == 2 * cost_of(price, past_tier // 2, 0, 5)
    assert cost_of_requests(price, [half, half]) < cost_of(price, 2 * (past_tier // 2), 0, 10)


@pytest.mark.parametrize(
    ("label", "base_url", "provider"),
    [
        ("anthropic:claude-sonnet-4-5", None, "anthropic"),
        ("google-gla:gemini-2.5-flash", None, "google"),
        ("gpt-4o-mini", None, "openai"),  # no prefix: genai-prices matches the model name
        ("gateway/openai:gpt-4o", None, "openai"),
        # a server genai-prices knows by its URL prices as that provider
        ("openai:openai/gpt-4o-mini@https://openrouter.ai/api/v1", None, "openrouter"),
        ("openai:gpt-4o-mini", "https://api.openai.com/v1/", "openai"),
        # a server it does not know: the provider prefix, as pydantic-ai's own cost does
        ("openai:gpt-4o-mini@http://127.0.0.1:8000/v1", None, "openai"),
    ],
)
def test_the_provider_comes_from_the_base_url_or_the_prefix(label: str, base_url: str, provider: str) -> None:
    assert priced(label, base_url).provider == provider


@pytest.mark.parametrize(
    "label",
    [
        "openai:llama3.1:8b@http://localhost:11434/v1",  # self-hosted, not an OpenAI model
        "openai:gpt-4o-mini@https://openrouter.ai/api/v1",  # the server's provider lists no such name
        "ollama:llama3",  # a provider genai-prices does not know is not priced as another's
        "test:judge",
        "no-such-model-anywhere",
        "anthropic:no-such-model",
    ],
)
def test_a_model_no_source_knows_has_no_price(label: str) -> None:
    assert price_for(label, None, {}) is None


def test_the_local_judge_is_free() -> None:
    price = priced("local:gemma-3-270m-q4_k_m")
    assert price.free and price.source == "local (free)"
    assert cost_of(price, 5000, 0, 200) == 0
    assert priced("local:http://127.0.0.1:8080/v1#qwen").free


@pytest.mark.parametrize(
    "key",
    ["openai:llama3@http://localhost:8000/v1", "openai:llama3", "llama3"],
    ids=["label", "label-without-url", "model-name"],
)
def test_an_override_prices_a_self_hosted_model(key: str) -> None:
    price = price_for("openai:llama3@http://localhost:8000/v1", None, {key: (0.2, 0.8)})
    assert price is not None
    assert (price.source, price.input_mtok, price.output_mtok) == (
        "--llmjudge-price",
        Decimal("0.2"),
        Decimal("0.8"),
    )
    # cached tokens have no rate of their own: they cost what input costs
    assert cost_of(price, 1_000_000, 400_000, 500_000) == Decimal("0.6")


def test_an_override_wins_over_genai_prices() -> None:
    price = price_for("openai:gpt-4o-mini", None, {"openai:gpt-4o-mini": (1.0, 2.0)})
    assert price is not None and price.source == "--llmjudge-price"
    assert cost_of(price, 1000, 0, 50) == Decimal("0.0011")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("openai:my-model=0.15/0.60", ("openai:my-model", 0.15, 0.6)),
        (" llama3 = 0 / 0 ", ("llama3", 0.0, 0.0)),
        ("openai:m@http://h:8000/v1?x=1=2/3", ("openai:m@http://h:8000/v1?x=1", 2.0, 3.0)),
    ],
)
def test_the_price_option_parses(text: str, expected: tuple[str, float, float]) -> None:
    assert parse_price_option(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("openai:my-model", "expected MODEL=IN/OUT"),
        ("=0.1/0.2", "expected MODEL=IN/OUT"),
        ("m=0.1", "expected MODEL=IN/OUT"),
        ("m=0.1/0.2/0.3", "expected MODEL=IN/OUT"),
        ("m=cheap/0.2", "the input price 'cheap' is not a number"),
        ("m=0.1/-2", "the output price must be a finite number ≥ 0"),
        ("m=nan/1", "the input price must be a finite number ≥ 0"),
    ],
)
def test_a_bad_price_option_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="--llmjudge-price") as raised:
        parse_price_option(text)
    assert message in str(raised.value)


def test_impossible_usage_is_refused() -> None:
    with pytest.raises(ValueError, match="not one request's usage"):
        cost_of(priced("openai:gpt-4o-mini"), 100, 200, 5)


@pytest.mark.parametrize(
    ("label", "parts"),
    [
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini", None)),
        ("openai:llama3.1:8b@http://h:1/v1", ("openai", "llama3.1:8b", "http://h:1/v1")),
        ("gpt-4o-mini", (None, "gpt-4o-mini", None)),
        ("meta-llama/Llama-3:8b", (None, "meta-llama/Llama-3:8b", None)),
    ],
)
def test_labels_split_into_provider_name_and_url(
    label: str, parts: tuple[str | None, str, str | None]
) -> None:
    assert split_label(label) == parts


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (Decimal("0.00018"), "$0.00018"),
        (Decimal("0.5"), "$0.50"),
        (Decimal(0), "$0.00"),
        (1234.5, "$1,234.50"),
    ],
)
def test_dollars_show_cents_or_the_small_digits(amount: Decimal | float, shown: str) -> None:
    assert format_usd(amount) == shown


def test_an_unpriced_model_is_named_with_the_option() -> None:
    message = unpriced_message("openai:llama3@http://localhost:8000/v1")
    assert "openai:llama3@http://localhost:8000/v1" in message and "--llmjudge-price" in message


def test_describe_says_where_the_price_comes_from() -> None:
    assert priced("openai:gpt-4o-mini").describe() == (
        "$0.15/$0.6 per Mtok in/out, cached in $0.075 (genai-prices: openai)"
    )


def test_describe_says_tiers_and_leaves_out_what_is_not_known() -> None:
    assert priced("anthropic:claude-sonnet-4-5").describe() == (
        "$3/$15 per Mtok in/out, cached in $0.3, tiered by input size (genai-prices: anthropic)"
    )
    override = price_for("my-model", None, {"my-model": (1.0, 2.5)})
    assert override is not None
    assert override.describe() == "$1.0/$2.5 per Mtok in/out (--llmjudge-price)"


def test_a_bad_price_option_shows_the_expected_form_and_the_value_given() -> None:
    with pytest.raises(ValueError) as raised:
        parse_price_option("openai:my-model")
    assert str(raised.value) == (
        "--llmjudge-price 'openai:my-model': expected MODEL=IN/OUT, USD per million input and output "
        "tokens (e.g. openai:my-model=0.15/0.60)"
    )
    with pytest.raises(ValueError) as raised:
        parse_price_option("m=x/0.2")
    assert str(raised.value) == "--llmjudge-price 'm=x/0.2': the input price 'x' is not a number"
    with pytest.raises(ValueError) as raised:
        parse_price_option("m=0.1/y")
    assert str(raised.value) == "--llmjudge-price 'm=0.1/y': the output price 'y' is not a number"


def test_a_call_is_priced_at_the_rates_in_force_when_it_was_made() -> None:
    from datetime import datetime

    deepseek = priced("deepseek:deepseek-chat")  # half price off-peak (16:30 to 00:30 UTC)
    peak, off_peak = (datetime(2025, 6, 2, hour, tzinfo=UTC) for hour in (2, 17))
    million = [RequestTokens(1_000_000)]
    assert cost_of_requests(deepseek, million, at=peak) == Decimal("0.27")
    assert cost_of_requests(deepseek, million, at=off_peak) == Decimal("0.135")


def test_a_call_of_no_requests_costs_nothing_and_shows_so() -> None:
    free = cost_of_requests(priced("openai:gpt-4o-mini"), [])
    assert isinstance(free, Decimal) and format_usd(free) == "$0.00"


def test_a_resold_model_is_priced_by_its_reseller() -> None:
    resold = priced("openai:openai/gpt-4o-mini", "openrouter.ai/api/v1")  # a base URL without a scheme
    assert (resold.model, resold.provider, resold.model_ref) == (
        "openai:openai/gpt-4o-mini",
        "openrouter",
        "openai/gpt-4o-mini",
    )
    assert cost_of(resold, 1_000_000, 0, 0) == Decimal("0.15")


def test_cached_plus_cache_write_tokens_cannot_pass_the_input() -> None:
    mini = priced("openai:gpt-4o-mini")
    assert cost_of(mini, 100, 60, 0, cache_write_tokens=40) > 0
    with pytest.raises(ValueError, match="100 input tokens, 60 cached, 50 cache-write, 0 output"):
        cost_of(mini, 100, 60, 0, cache_write_tokens=50)


@pytest.mark.parametrize(
    ("amount", "shown"), [(0.5, "$0.50"), (Decimal("1.234567"), "$1.23"), (Decimal("0.1234567"), "$0.123457")]
)
def test_dollars_from_floats_and_just_above_a_dollar(amount: Decimal | float, shown: str) -> None:
    assert format_usd(amount) == shown


@pytest.mark.parametrize("label", ["local", "local:gemma-3-270m"])
def test_the_local_judge_costs_nothing_for_any_token(label: str) -> None:
    zero = Decimal(0)
    assert price_for(label) == Price(label, None, zero, zero, zero, "local (free)")


def test_an_override_keeps_the_label_it_prices() -> None:
    override = price_for("openai:mine@http://h:1/v1", None, {"mine": (1.0, 2.0)})
    assert override == Price(
        "openai:mine@http://h:1/v1", None, Decimal("1.0"), None, Decimal("2.0"), "--llmjudge-price"
    )


def test_azure_models_are_priced_as_the_models_it_serves() -> None:
    by_prefix = priced("azure:gpt-4o-mini")
    by_url = priced("openai:gpt-4o-mini", "https://myres.openai.azure.com/openai/v1")
    gateway = priced("gateway/openai:gpt-4o-mini")
    assert (by_prefix.provider, by_url.provider, gateway.provider) == ("azure", "azure", "openai")
    assert by_prefix.input_mtok == by_url.input_mtok == gateway.input_mtok == Decimal("0.15")


def test_a_self_hosted_prefix_is_not_priced_as_the_model_it_names() -> None:
    assert price_for("ollama:gpt-4o-mini") is None


def test_a_model_without_a_cached_rate_keeps_its_input_rate() -> None:
    groq = priced("groq:llama-3.3-70b-versatile")
    assert (groq.input_mtok, groq.cached_input_mtok, groq.output_mtok) == (
        Decimal("0.59"),
        None,
        Decimal("0.79"),
    )


def test_an_at_sign_in_a_model_name_is_not_a_url() -> None:
    assert split_label("openai:model@v2@http://h:1/v1") == ("openai", "model@v2", "http://h:1/v1")
    assert split_label("openai:model@v2") == ("openai", "model@v2", None)
    assert split_label("https://h/v1") == ("https", "//h/v1", None)  # no @: never a base URL
    overrides = {"openai:model": (1.0, 1.0), "openai:model@v2": (2.0, 2.0)}
    assert price_for("openai:model@v3", None, overrides) is None  # another model, not openai:model
    served = price_for("openai:model@v2@http://h:1/v1", None, overrides)
    assert served is not None and served.input_mtok == Decimal("2.0")


def test_a_model_genai_prices_lists_without_token_rates_is_free() -> None:
    free = priced("azure:mai-ds-r1:free")
    assert (free.input_mtok, free.output_mtok) == (Decimal(0), Decimal(0))
    assert free.describe() == "$0/$0 per Mtok in/out (genai-prices: azure)"
