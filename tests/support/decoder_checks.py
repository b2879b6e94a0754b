"""Decode helpers for decoder tests, and the one oracle of a decoded run: the conformance kit.

:func:`assert_legal_run` asks ``conformance.check_events`` (whose error-level rules are proven
against ``@ag-ui/client`` 1.0.0 by ``tests/conformance/test_differential.py``) and adds the one
promise of ours the kit has no rule for, because the client does not require it: every
RUN_ERROR carries a ``code`` (the gateway's error contract, README "Endpoints").
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from ag_ui.core import Event

from agui_codecs import get_decoder
from agui_codecs.events import event_to_wire
from conformance import Report, check_events

__all__ = [
    "assert_legal_run",
    "decode_all",
    "decode_split",
    "kit_report",
    "random_cuts",
    "wire",
]


def wire(events: list[Event]) -> list[dict[str, Any]]:
    return [event_to_wire(e) for e in events]


def decode_all(name: str, data: bytes, **options: Any) -> list[Event]:
    d = get_decoder(name, **options)
    return d.feed(data) + d.close()


def decode_split(name: str, data: bytes, cuts: Iterable[int], **options: Any) -> list[Event]:
    d = get_decoder(name, **options)
    out: list[Event] = []
    prev = 0
    for cut in sorted({c for c in cuts if 0 < c < len(data)}):
        out += d.feed(data[prev:cut])
        prev = cut
    return out + d.feed(data[prev:]) + d.close()


def random_cuts(data: bytes, seed: int, n: int = 40) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(1, max(2, len(data))) for _ in range(n)]


def kit_report(events: Iterable[Event | dict[str, Any]], source: str = "<decoded>") -> Report:
    """The kit's report on an AG-UI event sequence (``ag_ui.core`` events or wire dicts)."""
    return check_events(events, source=source)


def assert_legal_run(
    events: list[Event] | list[dict[str, Any]], *, allowed_warnings: Iterable[str] = ()
) -> Report:
    """Assert the run is one ``@ag-ui/client`` 1.0 accepts and that it keeps our promises.

    * no error-level violation of the kit (schema, chunk expansion, every ``verifyEvents``
      rule: runs in sequence, one terminal event per run, balanced START/END per id, nothing
      open at RUN_FINISHED);
    * no warning either, except the rule ids in ``allowed_warnings``: the kit's hygiene rules
      cover ``protocolVersion: "1.0"`` on RUN_STARTED, no ``null`` for optional fields, ARGS
      that parse as JSON at END, nothing left open at RUN_ERROR, a terminal event at the end;
    * every RUN_ERROR has a non-empty string ``code`` (no kit rule: the client does not ask).

    Returns the report (for further checks).
    """
    evs = [e if isinstance(e, dict) else event_to_wire(e) for e in events]
    assert evs, "no events"
    report = kit_report(evs)
    assert report.errors == [], [v.to_json() for v in report.errors]
    allowed = set(allowed_warnings)
    unexpected = [v.to_json() for v in report.warnings if v.rule_id not in allowed]
    assert unexpected == [], unexpected
    for i, e in enumerate(evs):
        if e["type"] == "RUN_ERROR":
            assert isinstance(e.get("code"), str) and e["code"], (
                f"event {i}: RUN_ERROR without code"
            )
    return report
