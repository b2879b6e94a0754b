"""Per-call cost of ui_schema compilation (agui_codecs.ui), warm cache vs. its anchors.

Usage: ``.venv/bin/python bench/ui_schema.py [--rounds N]``

For each case it prints the median time of one ``UiSchemaCompiler.compile`` call with a warm
cache (hints parsed, plan and component tree cached and validated: only the data projection
and three message dicts are built), and ratios against two anchors measured in the same run:

* ``dumps``: ``orjson.dumps`` of the resulting ui_schema, the least the gateway does with it;
* ``cold``: one compile with empty caches (hints validation, tree build, A2UI JSON Schema
  validation), paid once per (hints, locale, profile, catalogId, variant).

Cases use raw (per-call) hints, the worst case: each call also computes the hints' canonical
JSON to find the cache entry. Route-config hints (pre-parsed ``UiHints``) skip that.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson

from agui_codecs.ui import UiSchemaCompiler, parse_hints

CALENDAR_HINTS: dict[str, Any] = {
    "kind": "record_list",
    "title": {"en": "Upcoming events", "de": "Anstehende Termine"},
    "data": "/events",
    "fields": [
        {"key": "summary", "label": "Event"},
        {"key": "start", "format": "datetime", "label": "Starts"},
        {"key": "location", "path": "/where/name", "label": "Where"},
        {"key": "all_day", "format": "bool", "label": "All day"},
    ],
}

ORDERS_HINTS: dict[str, Any] = {
    "kind": "table",
    "title": "Orders",
    "data": "/orders",
    "max_items": 25,
    "fields": [
        {"key": "id", "label": "Order"},
        {"key": "placed", "format": "date", "label": "Placed"},
        {"key": "qty", "format": "number", "label": "Qty"},
        {"key": "total", "format": "currency", "currency": "EUR", "decimals": 2},
        {"key": "discount", "format": "percent"},
        {"key": "status", "format": "enum", "enum": {"paid": "Paid", "open": "Open"}},
    ],
}

CONTACT_HINTS: dict[str, Any] = {
    "kind": "record",
    "title": "Contact",
    "fields": [
        {"key": "name"},
        {"key": "email", "format": "email"},
        {"key": "phone"},
        {"key": "website", "format": "url"},
    ],
}


def _events(n: int) -> dict[str, Any]:
    return {
        "events": [
            {
                "summary": f"Meeting {i}",
                "start": "2026-03-05T09:30:00Z",
                "where": {"name": f"Room {i}"},
                "all_day": i % 2 == 0,
            }
            for i in range(n)
        ]
    }


def _orders(n: int) -> dict[str, Any]:
    return {
        "orders": [
            {
                "id": f"A-{i}",
                "placed": "2026-02-27",
                "qty": i,
                "total": 10.5 * i,
                "discount": 0.1,
                "status": "paid" if i % 2 else "open",
            }
            for i in range(n)
        ]
    }


CASES: list[tuple[str, Any, Any]] = [
    (
        "record (contact, 4 fields)",
        CONTACT_HINTS,
        {"name": "Grace", "email": "g@example.com", "phone": "1", "website": "https://e.com"},
    ),
    ("record_list (3 events)", CALENDAR_HINTS, _events(3)),
    ("record_list (25 of 200 events)", dict(CALENDAR_HINTS, max_items=25), _events(200)),
    ("table (25 orders x 6 cols)", ORDERS_HINTS, _orders(25)),
    ("table, route-config hints", parse_hints(ORDERS_HINTS), _orders(25)),
]


def _median_us(fn: Callable[[], Any], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'case':34} {'warm us':>9} {'dumps us':>9} {'warm/dumps':>10} {'cold ms':>9}")
    for name, hints, output in CASES:
        t0 = time.perf_counter_ns()
        cold_compiler = UiSchemaCompiler()
        ui = cold_compiler.compile(hints, output, tool_call_id="call_0")
        cold_ms = (time.perf_counter_ns() - t0) / 1e6
        assert ui is not None, name
        compiler = UiSchemaCompiler()
        compiler.compile(hints, output, tool_call_id="call_0")  # warm the caches

        def warm(c: UiSchemaCompiler = compiler, h: Any = hints, o: Any = output) -> Any:
            return c.compile(h, o, tool_call_id="call_1")

        def dumps(u: Any = ui) -> bytes:
            return orjson.dumps(u)

        warm_us = _median_us(warm, args.rounds)
        dumps_us = _median_us(dumps, args.rounds)
        assert compiler.stats.validations == 1, "warm calls must not re-validate"
        print(f"{name:34} {warm_us:9.1f} {dumps_us:9.1f} {warm_us / dumps_us:10.1f} {cold_ms:9.1f}")


if __name__ == "__main__":
    main()
