"""The AG-UI encoder's lenient path (no transition guard: ``event_json``, one serialization, no
wire dict) frames every event as the wire path does: ``encode(e, id=i)`` is
``encode_wire(event_to_wire(e), id=i)``, byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ag_ui.core import Event
from event_strategies import event_sequences
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_codecs import get_decoder
from agui_codecs.core import strict
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.events import event_to_wire

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
FAMILIES = {"agui": "agui", "gemini": "gemini", "anthropic": "anthropic", "aisdk-ui": "ai-sdk"}


@pytest.fixture(autouse=True)
def _lenient() -> Iterator[None]:
    before = strict()
    strict(False)
    yield
    strict(before)


def _same(events: list[Event], event_lines: bool, ids: bool) -> None:
    fast, wire = AguiEncoder(event_lines=event_lines), AguiEncoder(event_lines=event_lines)
    for n, event in enumerate(events):
        cursor = f"c{n}" if ids else None
        assert fast.encode(event, id=cursor) == wire.encode_wire(event_to_wire(event), id=cursor)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=event_sequences(), event_lines=st.booleans(), ids=st.booleans())
def test_encode_gives_the_wire_path_bytes(
    events: list[Event], event_lines: bool, ids: bool
) -> None:
    _same(events, event_lines, ids)


@pytest.mark.parametrize(
    "path",
    [p for family in FAMILIES for p in sorted((CORPUS / family).iterdir())],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_corpus_events_give_the_wire_path_bytes(path: Path) -> None:
    decoder = get_decoder(FAMILIES[path.parent.name])
    events = decoder.feed(path.read_bytes()) + decoder.close()
    _same(events, event_lines=False, ids=False)
    _same(events, event_lines=True, ids=True)
