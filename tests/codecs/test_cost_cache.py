"""The per-model price cache of agui_codecs.cost gives exactly what genai-prices' own
``calc_price`` gives, for every model of the bundled catalog and any token counts (the cache
is a speed-up only: issue 13)."""

from __future__ import annotations

from datetime import UTC, datetime

from ag_ui.core import TokenUsage
from genai_prices import Usage, calc_price
from genai_prices.data_snapshot import get_snapshot
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agui_codecs.cost import price_usage

AT = datetime(2026, 6, 1, tzinfo=UTC)

_PAIRS = sorted(
    {(provider.id, model.id) for provider in get_snapshot().providers for model in provider.models}
)


def _library(counts: dict[str, int], model: str, provider: str) -> dict[str, object]:
    """What genai-prices' ``calc_price`` gives, with price_usage's documented fallback: a
    (provider, model) pair the catalog refuses is looked up by the model name alone (an
    OpenAI-compatible host is labelled with the protocol's provider; agui_codecs/cost.py)."""
    try:
        try:
            result = calc_price(
                Usage(**counts), model, provider_id=provider, genai_request_timestamp=AT
            )
        except LookupError:
            result = calc_price(Usage(**counts), model, genai_request_timestamp=AT)
    except LookupError:
        return {"lookup": True}
    except (ValueError, ArithmeticError):
        return {"error": True}
    return {
        "cost": float(result.total_price),
        "costProvider": result.provider.id,
        "costModel": result.model.id,
    }


@settings(deadline=None)
@given(
    pair=st.sampled_from(_PAIRS),
    input_tokens=st.integers(0, 3_000_000),
    output_tokens=st.integers(0, 500_000),
    cached=st.one_of(st.none(), st.integers(0, 3_000_000)),
    written=st.one_of(st.none(), st.integers(0, 3_000_000)),
)
# a catalog pair the library refuses with its provider (found by CI): the name-only fallback
@example(pair=("fireworks", "gpt-oss-120b"), input_tokens=0, output_tokens=0, cached=None,
         written=None)  # fmt: skip
def test_cached_price_equals_the_library_for_every_catalog_model(
    pair: tuple[str, str],
    input_tokens: int,
    output_tokens: int,
    cached: int | None,
    written: int | None,
) -> None:
    provider, model = pair
    usage = TokenUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_input_tokens=cached,
        cache_write_input_tokens=written,
        model=model,
        provider=provider,
    )
    counts = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cached is not None:
        counts["cache_read_tokens"] = cached
    if written is not None:
        counts["cache_write_tokens"] = written
    expected = _library(counts, model, provider)
    # twice: the first call fills the cache, the second is served from it
    for _ in range(2):
        got = price_usage(usage, at=AT)
        if "cost" in expected:
            assert {k: got.get(k) for k in expected} == expected
        else:
            assert "cost" not in got
            assert "costWarning" in got


def test_a_cached_lookup_failure_is_raised_again_with_its_message() -> None:
    usage = TokenUsage(input_tokens=1, output_tokens=1, model="no-such-model-x1", provider="openai")
    first, second = price_usage(usage, at=AT), price_usage(usage, at=AT)
    assert first == second
    assert "not in the genai-prices catalog" in str(first["costWarning"])


def _tiered_pairs() -> list[tuple[str, str, int]]:
    """(provider, model, lowest tier start) of every catalog model with tiered prices now."""
    from genai_prices.types import TieredPrices

    out = []
    for provider in get_snapshot().providers:
        for model in provider.models:
            prices = model.get_prices(AT)
            starts = [
                t.start
                for v in vars(prices).values()
                if isinstance(v, TieredPrices)
                for t in v.tiers
            ]
            if starts:
                out.append((provider.id, model.id, min(starts)))
    return sorted(out)


_TIERED = _tiered_pairs()


def test_the_catalog_has_tiered_models() -> None:
    assert len(_TIERED) > 5


@settings(deadline=None)
@given(
    tiered=st.sampled_from(_TIERED),
    offset=st.integers(-1500, 1500),
    output_tokens=st.integers(0, 50_000),
    cached=st.one_of(st.none(), st.integers(0, 1000)),
    written=st.one_of(st.none(), st.integers(0, 1000)),
)
def test_tiered_models_price_as_the_library_around_their_lowest_tier(
    tiered: tuple[str, str, int],
    offset: int,
    output_tokens: int,
    cached: int | None,
    written: int | None,
) -> None:
    """A model with tiered prices is priced from the cached base rates up to its lowest tier's
    start and by the library past it: the same figure either side of the cliff."""
    provider, model, start = tiered
    input_tokens = max(0, start + offset) if offset % 3 else max(0, offset)
    usage = TokenUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_input_tokens=cached,
        cache_write_input_tokens=written,
        model=model,
        provider=provider,
    )
    counts = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cached is not None:
        counts["cache_read_tokens"] = cached
    if written is not None:
        counts["cache_write_tokens"] = written
    expected = _library(counts, model, provider)
    for _ in range(2):
        got = price_usage(usage, at=AT)
        if "cost" in expected:
            assert {k: got.get(k) for k in expected} == expected
        else:
            assert "cost" not in got
