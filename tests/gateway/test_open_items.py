"""OpenItems (gateway/open_items.py) skips the content events yet closes what the full fold
closes: ``closing_events`` and ``ended`` equal :class:`agui_codecs.core.RunFold`'s after
every prefix of arbitrary event sequences (chunk events included, ids from a small pool so
they meet their openers)."""

from __future__ import annotations

from event_strategies import event_sequences
from hypothesis import HealthCheck, given, settings

from agui_codecs.core import RunFold
from agui_codecs.events import event_to_wire
from gateway.open_items import OpenItems


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence=event_sequences(max_size=30))
def test_open_items_close_what_the_full_fold_closes(sequence: list[object]) -> None:
    fold, items = RunFold(), OpenItems()
    for event in sequence:
        wire = event_to_wire(event)  # type: ignore[arg-type]
        fold.apply(wire)
        items.apply(wire)
        assert items.closing_events() == fold.closing_events()
        assert items.ended == fold.ended
