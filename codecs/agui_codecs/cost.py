"""Normalized cost of a run: USD from the provider's own figure, else from a bundled price catalog.

:func:`price_usage` turns one AG-UI ``TokenUsage`` (ag-ui-protocol 1.0, ``spec/1.0/schema.json``:
``inputTokens`` and ``outputTokens`` are totals, ``cachedInputTokens``, ``cacheWriteInputTokens``
and ``reasoningTokens`` are parts of them) into the cost keys that
:class:`~agui_codecs.builder.RunBuilder` merges into RUN_FINISHED / RUN_ERROR ``metadata``:

==================  ==========================================================================
key                 value
==================  ==========================================================================
``cost``            float, US dollars; **absent** when no trustworthy figure exists
``currency``        always ``"USD"``
``costSource``      which rule produced (or would have produced) ``cost``, see below
``costProvider``    catalog provider id used (``"openai"``), when the catalog priced the run
``costModel``       catalog model id matched (``"gpt-4o"`` for ``gpt-4o-2024-08-06``), likewise
``providerCost``    the provider's partial figure, when it was reported but not complete
``costWarning``     why ``cost`` is absent or approximate (unknown model, missing counts)
==================  ==========================================================================

``costSource`` values, first matching rule wins:

* ``provider``: the provider reported a complete cost for the call (OpenRouter ``usage.cost``
  without BYOK); it is used as is and the catalog is not consulted.
* ``incomplete_usage_fallback``: no complete provider cost, and the usage lacks ``inputTokens``
  or ``outputTokens``; the catalog prices the counts that are there (a missing total is taken
  as the sum of its reported parts, else 0), so the figure is a lower bound. ``costWarning``
  names the missing counts.
* ``catalog_fallback_incomplete_provider_cost``: the provider reported a cost that it marked as
  partial (e.g. OpenRouter BYOK: the fee only, without the upstream inference cost); the full
  usage is priced from the catalog and the partial figure is kept as ``providerCost``.
* ``catalog_fallback``: no provider cost at all; the full usage is priced from the catalog.

An unknown model (or provider), or a usage without a model, never raises: ``cost`` is left out
and ``costWarning`` says why, so the usage still reaches the client unpriced.

The catalog is the PyPI package ``genai-prices`` (pydantic/genai-prices), read **only from the
data bundled in the installed version**: its ``UpdatePrices`` background fetcher is never
started, so pricing is deterministic per installed version and works offline. Its accounting
matches AG-UI's (``input_tokens`` includes ``cache_read_tokens`` / ``cache_write_tokens``,
``output_tokens`` includes reasoning), so the counts are passed through unchanged and reasoning
is never added twice. ``genai_prices`` is imported lazily on the first call: its package
``__init__`` imports ``httpx2``/``asyncio`` for the optional fetcher, which a sans-I/O module
must not pull in at import time.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final, Literal

from ag_ui.core import TokenUsage

__all__ = ["COST_KEYS", "COST_SOURCES", "CostSource", "price_usage"]

CostSource = Literal[
    "provider",
    "catalog_fallback",
    "catalog_fallback_incomplete_provider_cost",
    "incomplete_usage_fallback",
]
COST_SOURCES: Final[tuple[CostSource, ...]] = (
    "provider",
    "catalog_fallback",
    "catalog_fallback_incomplete_provider_cost",
    "incomplete_usage_fallback",
)
"""The values of ``costSource`` (module docstring gives their meaning)."""

COST_KEYS: Final[tuple[str, ...]] = (
    "cost",
    "currency",
    "costSource",
    "costProvider",
    "costModel",
    "providerCost",
    "costWarning",
)
"""Every key :func:`price_usage` may return (encoders copy these from run metadata)."""


def _count(value: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _money(value: float | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def price_usage(
    usage: TokenUsage | None,
    *,
    provider_cost: float | None = None,
    provider_cost_complete: bool = False,
    at: datetime | None = None,
) -> dict[str, Any]:
    """Return the cost metadata of one call (keys and ``costSource`` rules: module docstring).

    Args:
        usage: the call's token usage; ``usage.provider`` and ``usage.model`` select the catalog
            entry (the provider is tried first, then any provider whose models match).
        provider_cost: the cost in USD the provider reported, if any (ignored unless a finite
            number >= 0).
        provider_cost_complete: True when ``provider_cost`` covers the whole call.
        at: when the call was made, for catalog prices that changed over time (default: now).

    Returns:
        A dict with at least ``currency`` and ``costSource``; ``{}`` when there is neither
        usage nor a provider cost. Never raises for unknown models or odd counts.
    """
    reported = _money(provider_cost)
    if reported is not None and provider_cost_complete:
        return {"cost": reported, "currency": "USD", "costSource": "provider"}
    if usage is None:
        if reported is None:
            return {}
        return {
            "currency": "USD",
            "costSource": "catalog_fallback_incomplete_provider_cost",
            "providerCost": reported,
            "costWarning": "partial provider cost and no token usage to price",
        }
    counts = {
        "input_tokens": _count(usage.input_tokens),
        "output_tokens": _count(usage.output_tokens),
        "cache_read_tokens": _count(usage.cached_input_tokens),
        "cache_write_tokens": _count(usage.cache_write_input_tokens),
    }
    missing = [
        name
        for name, key in (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"))
        if counts[key] is None
    ]
    source: CostSource
    if missing:
        source = "incomplete_usage_fallback"
    elif reported is not None:
        source = "catalog_fallback_incomplete_provider_cost"
    else:
        source = "catalog_fallback"
    out: dict[str, Any] = {"currency": "USD", "costSource": source}
    if reported is not None:
        out["providerCost"] = reported
    warnings: list[str] = []
    if missing:
        warnings.append(f"usage lacks {' and '.join(missing)}; priced the counts reported")
        if counts["input_tokens"] is None:  # the cache counts are parts of the input total
            parts = [c for c in (counts["cache_read_tokens"], counts["cache_write_tokens"]) if c]
            counts["input_tokens"] = sum(parts) if parts else None
        if counts["output_tokens"] is None:
            counts["output_tokens"] = _count(usage.reasoning_tokens)
    priced = {k: v for k, v in counts.items() if v is not None}
    if not usage.model:
        warnings.append("no model named in the usage")
    elif not priced:
        warnings.append("no token counts to price")
    else:
        try:
            out.update(_catalog(priced, usage.model, usage.provider, at))
        except LookupError as exc:
            warnings.append(f"not in the genai-prices catalog: {exc}")
        except (ValueError, ArithmeticError) as exc:
            warnings.append(f"catalog could not price this usage: {exc}")
    if warnings:
        out["costWarning"] = "; ".join(warnings)
    return {key: out[key] for key in COST_KEYS if key in out}


def _catalog(
    counts: dict[str, int], model: str, provider: str | None, at: datetime | None
) -> dict[str, Any]:
    """Price ``counts`` (genai-prices usage keys) for ``model``; LookupError when unknown."""
    when = at if at is not None else datetime.now(tz=UTC)
    entry = _resolve(model, provider)
    if isinstance(entry, str):
        raise LookupError(entry)
    found_provider, found_model = entry
    prices = found_model.get_prices(when)
    rates = _linear_rates(found_provider, found_model, prices, when, frozenset(counts))
    if rates is not None and counts["input_tokens"] > _base_tier_limit(prices):
        rates = None  # a tier above the base applies: the library prices it
    if rates is not None and counts["input_tokens"] >= counts.get(
        "cache_read_tokens", 0
    ) + counts.get("cache_write_tokens", 0):
        total = sum(
            (
                rate * (_uncached(counts) if key == "input_tokens" else counts[key])
                for key, rate in rates.items()
            ),
            Decimal(0),
        )
    else:
        total = found_model.calc_price(
            _usage(counts), found_provider, genai_request_timestamp=when
        ).total_price
    return {"cost": float(total), "costProvider": found_provider.id, "costModel": found_model.id}


# -- the per-model cache -------------------------------------------------------------------------
# genai-prices 0.2 recomputes its unit registry, usage decomposition and validation on every
# ``calc_price`` (0.1-1.7 ms a call here), and a provider-less fallback lookup scans every
# provider again each time. A model whose price is plain per-token rates for the counts given
# (no tiers, nothing charged per request) costs a linear function of those counts, so its
# rates are found once per (model price, set of counts) by pricing one token of each kind
# through the library, checked once against the library on a mixed usage (and a zero usage
# must cost nothing: no per-request price), and reused. Tiered prices are plain rates up to
# their lowest tier's start (a tier applies to every token once the input exceeds its start),
# so a usage under it is priced from the same rates; a usage over it, or a model failing that
# check, is priced by the library every time. Units we never count (web
# searches...) have no count, so they cost nothing either way. Equality with ``calc_price`` on
# the bundled catalog is a test (tests/codecs/test_cost_cache.py).

_resolved: dict[tuple[str, str | None], tuple[Any, Any] | str] = {}
_rates: dict[tuple[int, frozenset[str]], dict[str, Decimal] | None] = {}
_CACHE_LIMIT = 4096  # distinct (model, provider) pairs / rate sets kept; cleared when exceeded


def _uncached(counts: dict[str, int]) -> int:
    return (
        counts["input_tokens"]
        - counts.get("cache_read_tokens", 0)
        - counts.get("cache_write_tokens", 0)
    )


def _usage(counts: dict[str, int]) -> Any:
    from genai_prices import Usage  # lazy: see the module docstring

    return Usage(**counts)


def _resolve(model: str, provider: str | None) -> Any:
    """(provider, model) objects of the catalog for this pair, or the message of the
    LookupError to raise."""
    key = (model, provider)
    found = _resolved.get(key)
    if found is not None:
        return found
    from genai_prices.data_snapshot import get_snapshot  # lazy: see the module docstring

    snapshot = get_snapshot()
    try:
        found = snapshot.find_provider_model(model, None, provider, None)
    except LookupError as exc:
        if provider is None:
            found = str(exc)
        else:
            # OpenAI-compatible hosts are labelled with the protocol's provider; let the model
            # name find its real provider (``deepseek-v4-flash`` -> deepseek).
            try:
                found = snapshot.find_provider_model(model, None, None, None)
            except LookupError as second:
                found = str(second)
    if len(_resolved) >= _CACHE_LIMIT:
        _resolved.clear()
    _resolved[key] = found
    return found


def _linear_rates(
    provider: Any, model: Any, prices: Any, when: datetime, keys: frozenset[str]
) -> dict[str, Decimal] | None:
    """USD per token of each count in ``keys`` when ``prices`` is linear in them, else None."""
    cache_key = (id(prices), keys)
    if cache_key in _rates:
        return _rates[cache_key]
    rates: dict[str, Decimal] | None = None
    if "input_tokens" in keys and _is_plain(prices) and provider.id != "groq":
        zero = dict.fromkeys(keys, 0)

        def price(**one: int) -> Decimal:
            usage = {**zero, **one}
            result = model.calc_price(_usage(usage), provider, genai_request_timestamp=when)
            return Decimal(result.total_price)

        try:
            base = price()
            rates = {"input_tokens": price(input_tokens=1)}
            for key in keys - {"input_tokens"}:
                extra = {"input_tokens": 1} if key.startswith("cache_") else {}
                rates[key] = price(**{key: 1, **extra})
            mixed = {key: 7 + 3 * i for i, key in enumerate(sorted(keys))}
            mixed["input_tokens"] = _PROBE_INPUT
            expected = price(**mixed)
            got = sum(
                (
                    r * (_uncached(mixed) if k == "input_tokens" else mixed[k])
                    for k, r in rates.items()
                ),
                Decimal(0),
            )
            if base != 0 or got != expected:
                rates = None
        except (ValueError, ArithmeticError, LookupError, TypeError):
            rates = None
    if len(_rates) >= _CACHE_LIMIT:
        _rates.clear()
    _rates[cache_key] = rates
    return rates


def _is_plain(prices: Any) -> bool:
    """Prices that are rates per token up to :func:`_base_tier_limit` input tokens, which
    holds every probe of :func:`_linear_rates` (at most 1000 input tokens)."""
    values = [v for k, v in vars(prices).items() if not k.startswith("_") and v is not None]
    return bool(values) and _base_tier_limit(prices) >= _PROBE_INPUT


_PROBE_INPUT: Final = 1000
"""The most input tokens a probe of :func:`_linear_rates` prices."""
_tier_limits: dict[int, float] = {}


def _base_tier_limit(prices: Any) -> float:
    """The most input tokens priced at the base rates: genai-prices' ``TieredPrices`` charge a
    tier's rate on every token once the request's input tokens exceed its ``start`` (the
    "cliff" model of ``calc_unit_price``), so up to the lowest ``start`` of all tiers the prices
    are plain rates; ``inf`` without tiers."""
    limit = _tier_limits.get(id(prices))
    if limit is None:
        from genai_prices.types import TieredPrices  # lazy: see the module docstring

        starts = [
            tier.start
            for value in vars(prices).values()
            if isinstance(value, TieredPrices)
            for tier in value.tiers
        ]
        limit = float(min(starts)) if starts else math.inf
        if len(_tier_limits) >= _CACHE_LIMIT:
            _tier_limits.clear()
        _tier_limits[id(prices)] = limit
    return limit
