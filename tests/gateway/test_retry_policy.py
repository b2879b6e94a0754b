"""The retry decisions (gateway/retry.py): ``Retry-After`` per RFC 9110 §10.2.3 (delay-seconds or
an HTTP-date, the example date of §5.6.7), ``retry-after-ms`` as OpenAI and Azure send it, and
the equal-jitter backoff bounds (AWS Architecture Blog, "Exponential Backoff And Jitter")."""

from __future__ import annotations

import random
from email.utils import parsedate_to_datetime

import httpx
from hypothesis import given
from hypothesis import strategies as st

from gateway.retry import backoff, failure_kind, retry_after, retryable

RFC_DATE = "Sun, 06 Nov 1994 08:49:37 GMT"  # RFC 9110 §5.6.7
RFC_TIME = parsedate_to_datetime(RFC_DATE).timestamp()


def test_retry_after_seconds() -> None:
    assert retry_after(httpx.Headers({"Retry-After": "120"})) == 120.0


def test_retry_after_http_date() -> None:
    assert retry_after(httpx.Headers({"retry-after": RFC_DATE}), now=RFC_TIME - 30) == 30.0


def test_retry_after_date_in_the_past_is_zero() -> None:
    assert retry_after(httpx.Headers({"retry-after": RFC_DATE}), now=RFC_TIME + 5) == 0.0


def test_retry_after_ms_wins() -> None:
    headers = httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"})
    assert retry_after(headers) == 1.5


def test_unparsable_retry_after_is_ignored() -> None:
    for value in ("soon", "-3", "1.5e400x", ""):
        assert retry_after(httpx.Headers({"retry-after": value})) is None
    assert retry_after(httpx.Headers({"retry-after-ms": "nan"})) is None
    assert retry_after(httpx.Headers({})) is None


@given(
    failures=st.integers(1, 30),
    base=st.floats(0, 5),
    cap=st.floats(0, 60),
    seed=st.integers(0, 2**32),
)
def test_backoff_stays_within_half_and_whole_of_its_ceiling(
    failures: int, base: float, cap: float, seed: int
) -> None:
    ceiling = min(cap, base * 2.0 ** (failures - 1))
    delay = backoff(failures, base=base, cap=cap, rng=random.Random(seed))
    assert ceiling / 2 <= delay <= ceiling


def test_what_is_retried() -> None:
    assert retryable("rate_limit_exceeded", 429)
    assert retryable("UPSTREAM_HTTP_502", 502)
    assert retryable("overloaded_error", None)  # a stream error event has no status
    assert not retryable("invalid_api_key", 401)
    assert not retryable("context_length_exceeded", 400)
    assert not retryable("UPSTREAM_MALFORMED", 200)
    assert not retryable("UPSTREAM_EMPTY", 200)


def test_failure_kinds() -> None:
    assert failure_kind("context_length_exceeded", 400) == "context_length_exceeded"
    anthropic = "prompt is too long: 210000 tokens > 200000 maximum"  # Anthropic's 400 message
    assert failure_kind("invalid_request_error", 400, anthropic) == "context_length_exceeded"
    assert failure_kind("rate_limit_exceeded", 429) == "rate_limited"
    assert failure_kind("UPSTREAM_TIMEOUT", None) == "timeout"
    assert failure_kind("UPSTREAM_UNAVAILABLE", None) == "unavailable"
    assert failure_kind("invalid_api_key", 401) == "error"
