"""Normalized cost (``agui_codecs.cost.price_usage``): the four cost sources, unknown models.

Catalog figures are checked against OpenAI's published list prices (USD per 1M tokens) for
``gpt-4o``: input 2.50, cached input 1.25, output 10.00.
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from agui_codecs.cost import COST_KEYS, COST_SOURCES, price_usage
from agui_codecs.events import TokenUsage

GPT4O_IN, GPT4O_CACHED, GPT4O_OUT = 2.50, 1.25, 10.00  # USD per 1M tokens


def usage(**counts: object) -> TokenUsage:
    base: dict[str, object] = {"provider": "openai", "model": "gpt-4o-2024-08-06"}
    base.update(counts)
    return TokenUsage(**base)


def test_known_model_is_priced_from_the_catalog_at_list_price() -> None:
    out = price_usage(usage(input_tokens=1000, output_tokens=100, cached_input_tokens=200))
    expected = (800 * GPT4O_IN + 200 * GPT4O_CACHED + 100 * GPT4O_OUT) / 1e6
    assert out["cost"] == pytest.approx(expected, rel=1e-12)
    assert out["currency"] == "USD"
    assert out["costSource"] == "catalog_fallback"
    assert (out["costProvider"], out["costModel"]) == ("openai", "gpt-4o")
    assert "costWarning" not in out


def test_reasoning_tokens_are_a_part_of_output_and_never_priced_twice() -> None:
    plain = price_usage(usage(input_tokens=1000, output_tokens=500))
    with_reasoning = price_usage(usage(input_tokens=1000, output_tokens=500, reasoning_tokens=400))
    assert with_reasoning["cost"] == plain["cost"]
    assert plain["cost"] == pytest.approx((1000 * GPT4O_IN + 500 * GPT4O_OUT) / 1e6, rel=1e-12)


def test_unknown_model_gives_usage_without_cost_and_a_warning_never_an_error() -> None:
    out = price_usage(usage(model="no-such-model-2099", input_tokens=10, output_tokens=5))
    assert "cost" not in out
    assert out["currency"] == "USD"
    assert out["costSource"] == "catalog_fallback"
    assert "no-such-model-2099" in out["costWarning"]


def test_usage_without_a_model_is_not_priced() -> None:
    out = price_usage(TokenUsage(provider="openai", input_tokens=10, output_tokens=5))
    assert "cost" not in out and out["costWarning"] == "no model named in the usage"


def test_complete_provider_cost_is_used_as_is() -> None:
    out = price_usage(
        usage(model="openai/gpt-oss-20b", input_tokens=78, output_tokens=37),
        provider_cost=1.13e-05,
        provider_cost_complete=True,
    )
    assert out == {"cost": 1.13e-05, "currency": "USD", "costSource": "provider"}


def test_partial_provider_cost_falls_back_to_the_catalog_and_is_kept() -> None:
    out = price_usage(
        usage(input_tokens=1000, output_tokens=100),
        provider_cost=0.0001,
        provider_cost_complete=False,
    )
    assert out["costSource"] == "catalog_fallback_incomplete_provider_cost"
    assert out["providerCost"] == 0.0001
    assert out["cost"] == pytest.approx((1000 * GPT4O_IN + 100 * GPT4O_OUT) / 1e6, rel=1e-12)


def test_partial_provider_cost_without_usage_has_no_cost() -> None:
    out = price_usage(None, provider_cost=0.5)
    assert "cost" not in out
    assert out["costSource"] == "catalog_fallback_incomplete_provider_cost"
    assert out["providerCost"] == 0.5


def test_nothing_to_price_gives_nothing() -> None:
    assert price_usage(None) == {}


def test_usage_missing_a_total_is_priced_from_what_is_there() -> None:
    out = price_usage(usage(output_tokens=100, cached_input_tokens=40))
    assert out["costSource"] == "incomplete_usage_fallback"
    # the missing input total is at least its reported cached part
    assert out["cost"] == pytest.approx((40 * GPT4O_CACHED + 100 * GPT4O_OUT) / 1e6, rel=1e-12)
    assert "inputTokens" in out["costWarning"]


def test_incomplete_usage_wins_over_a_partial_provider_cost() -> None:
    out = price_usage(usage(input_tokens=100), provider_cost=0.01)
    assert out["costSource"] == "incomplete_usage_fallback"
    assert out["providerCost"] == 0.01


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, True, "0.1"])
def test_provider_cost_that_is_not_a_finite_amount_is_ignored(bad: object) -> None:
    out = price_usage(
        usage(input_tokens=1000, output_tokens=100),
        provider_cost=bad,  # type: ignore[arg-type]
        provider_cost_complete=True,
    )
    assert out["costSource"] == "catalog_fallback"
    assert math.isfinite(out["cost"])


def test_inconsistent_counts_are_a_warning_not_an_error() -> None:
    out = price_usage(usage(input_tokens=10, output_tokens=1, cached_input_tokens=50))
    assert "cost" not in out and "costWarning" in out


def test_compatible_host_labelled_openai_finds_the_models_own_provider() -> None:
    out = price_usage(usage(model="deepseek-v4-flash", input_tokens=90, output_tokens=15))
    assert out["costProvider"] == "deepseek" and out["cost"] > 0


def test_keys_and_sources_are_the_documented_ones() -> None:
    out = price_usage(usage(input_tokens=1, output_tokens=1), provider_cost=0.1)
    assert set(out) <= set(COST_KEYS)
    assert out["costSource"] in COST_SOURCES


def test_explicit_request_time_is_accepted() -> None:
    at = datetime(2025, 6, 1, tzinfo=UTC)
    out = price_usage(usage(input_tokens=1_000_000, output_tokens=0), at=at)
    assert out["cost"] == pytest.approx(GPT4O_IN)


def test_prices_come_from_bundled_data_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> socket.socket:
        raise AssertionError("price_usage must not open a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    out = price_usage(usage(model="gpt-4o-mini", input_tokens=1000, output_tokens=100))
    assert out["cost"] > 0


def test_importing_the_cost_module_pulls_in_no_io_library() -> None:
    code = (
        "import sys, agui_codecs.cost\n"
        "bad = {'genai_prices', 'httpx', 'httpx2', 'asyncio'} & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
