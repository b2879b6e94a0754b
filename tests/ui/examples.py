"""Realistic ui_hints + tool outputs, one or more per kind, shared by the ui tests."""

from __future__ import annotations

from typing import Any, Final

Example = tuple[dict[str, Any], Any]
"""(hints, tool output)."""

CALENDAR: Final[Example] = (
    {
        "kind": "record_list",
        "title": {"en": "Upcoming events", "de": "Anstehende Termine"},
        "data": "/events",
        "max_items": 10,
        "empty": {"en": "Nothing planned", "de": "Nichts geplant"},
        "fields": [
            {"key": "summary", "label": "Event"},
            {"key": "start", "format": "datetime", "label": {"en": "Starts", "de": "Beginn"}},
            {"key": "location", "path": "/where/name", "label": "Where"},
            {"key": "all_day", "format": "bool", "label": "All day"},
        ],
    },
    {
        "events": [
            {
                "summary": "Team sync",
                "start": "2026-03-05T09:30:00Z",
                "where": {"name": "Room 4"},
                "all_day": False,
            },
            {
                "summary": "Offsite",
                "start": "2026-03-06",
                "where": {"name": "Lisbon"},
                "all_day": True,
            },
            {
                "summary": "1:1 with Ana",
                "start": "2026-03-09T15:00:00+01:00",
                "where": {"name": "Video call"},
                "all_day": False,
            },
        ],
        "next_page": None,
    },
)

CONTACT: Final[Example] = (
    {
        "kind": "record",
        "title": "Contact",
        "fields": [
            {"key": "name", "label": "Name"},
            {"key": "email", "format": "email", "label": "Email"},
            {"key": "phone", "label": "Phone"},
            {"key": "company", "path": "/org/name", "label": "Company"},
            {"key": "website", "format": "url", "label": "Website"},
            {"key": "avatar", "format": "image", "label": "Photo"},
            {"key": "since", "format": "date", "label": "Customer since"},
        ],
    },
    {
        "name": "Grace Hopper",
        "email": "grace@example.com",
        "phone": "+1 555 0100",
        "org": {"name": "Navy"},
        "website": "https://example.com/grace",
        "avatar": "https://images.example.com/grace.png",
        "since": "1944-07-01",
    },
)

ORDERS: Final[Example] = (
    {
        "kind": "table",
        "title": {"en": "Orders", "de": "Bestellungen"},
        "data": "/orders",
        "fields": [
            {"key": "id", "label": "Order"},
            {"key": "placed", "format": "date", "label": "Placed"},
            {"key": "qty", "format": "number", "label": "Qty"},
            {
                "key": "total",
                "format": "currency",
                "currency": "EUR",
                "decimals": 2,
                "label": "Total",
            },
            {"key": "discount", "format": "percent", "label": "Discount"},
            {
                "key": "status",
                "format": "enum",
                "label": "Status",
                "enum": {
                    "paid": {"en": "Paid", "de": "Bezahlt"},
                    "open": "Open",
                    "refunded": "Refunded",
                },
            },
        ],
    },
    {
        "orders": [
            {
                "id": "A-1001",
                "placed": "2026-02-27",
                "qty": 1200,
                "total": 1234.5,
                "discount": 0.1,
                "status": "paid",
            },
            {
                "id": "A-1002",
                "placed": "2026-03-01",
                "qty": 3,
                "total": "89.99",
                "discount": 0,
                "status": "open",
            },
        ],
        "count": 2,
    },
)

SERVER_INFO: Final[Example] = (
    {
        "kind": "key_value",
        "title": "Server",
        "data": "/server",
        "fields": [{"key": "tls", "format": "bool", "label": "TLS"}],
    },
    {
        "server": {
            "host": "db-1.internal",
            "port": 5432,
            "tls": True,
            "region": "eu-west-1",
            "tags": ["primary", "ssd"],
        }
    },
)

DEPLOY_STATUS: Final[Example] = (
    {
        "kind": "status",
        "title": "Deployment",
        "fields": [
            {"key": "state", "format": "enum", "enum": {"succeeded": "Succeeded"}},
            {"key": "version", "label": "Version"},
            {"key": "duration", "format": "number", "decimals": 1, "label": "Seconds"},
        ],
    },
    {"state": "succeeded", "version": "v1.4.2", "duration": 42.46},
)

SPEC_LINK: Final[Example] = (
    {"kind": "link", "title": "Reference"},
    {
        "title": "A2UI v0.9 specification",
        "url": "https://a2ui.org/specification/v0_9/",
        "description": "Protocol and basic catalog",
    },
)

SNIPPET: Final[Example] = (
    {"kind": "code", "title": "fib.py", "language": "python", "data": "/source"},
    {"source": "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"},
)

PATCH: Final[Example] = (
    {"kind": "diff", "title": "Proposed change"},
    "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print('hi')\n+print('hello')\n",
)

PHOTO: Final[Example] = (
    {"kind": "image", "title": "Result"},
    {"url": "https://images.example.com/cat.jpg", "caption": "A cat on a keyboard"},
)

PAYMENT_CONFIRM: Final[Example] = (
    {
        "kind": "confirm",
        "title": {"en": "Send this payment?", "de": "Zahlung senden?"},
        "subtitle": "The money leaves your account today.",
        "fields": [
            {"key": "to", "label": "To"},
            {
                "key": "amount",
                "format": "currency",
                "currency_path": "/currency",
                "label": "Amount",
            },
        ],
        "confirm_label": {"en": "Send", "de": "Senden"},
    },
    {"to": "ACME GmbH", "amount": 250, "currency": "USD"},
)

ALL: Final[dict[str, Example]] = {
    "calendar": CALENDAR,
    "contact": CONTACT,
    "orders": ORDERS,
    "server_info": SERVER_INFO,
    "deploy_status": DEPLOY_STATUS,
    "spec_link": SPEC_LINK,
    "snippet": SNIPPET,
    "patch": PATCH,
    "photo": PHOTO,
    "payment_confirm": PAYMENT_CONFIRM,
}
"""Every kind of ui_hints v1 at least once."""

assert {h["kind"] for h, _ in ALL.values()} == {
    "record",
    "record_list",
    "table",
    "key_value",
    "status",
    "link",
    "code",
    "diff",
    "image",
    "confirm",
}
