"""The AG-UI passthrough decoder gives back the event its cleaner validated when the normalizer
emits that event's wire form unchanged (``AguiCleaner.event_of``), instead of validating it a
second time: the decoded events, repairs and error are those of validating every emitted wire
(``reuse_validated = False``), for any event sequence, legal or not, and every recorded AG-UI
stream (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from ag_ui.core import Event
from event_strategies import event_sequences
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs import get_decoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.agui import _cleaning as cleaning

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "agui"


def decode(body: bytes, *, reuse: bool) -> tuple[list[tuple[type, Any]], Any, Any]:
    decoder = get_decoder("agui")
    decoder.normalizer.reuse_validated = reuse
    decoder.normalizer.fast_plain = False  # (its own test: test_agui_plain_fast_path.py)
    out: list[Event] = decoder.feed(body) + decoder.close()
    error = None if decoder.error is None else (type(decoder.error), decoder.error.code)
    return [(type(e), e) for e in out], decoder.repairs, error


def same_either_way(body: bytes) -> None:
    fast, slow = decode(body, reuse=True), decode(body, reuse=False)
    assert fast == slow
    assert [event_to_wire(e) for _, e in fast[0]] == [event_to_wire(e) for _, e in slow[0]]


@given(event_sequences())
def test_any_event_sequence_decodes_the_same(events: list[Event]) -> None:
    same_either_way(b"".join(orjson.dumps(event_to_wire(e)) + b"\n" for e in events))


TEXT = st.text(alphabet=st.sampled_from(["a", " ", "\u00e9", "\U0001f600", '"', "\\"]), min_size=1)


@given(
    deltas=st.lists(TEXT, min_size=1, max_size=6),
    ids=st.lists(st.sampled_from(["m1", "m2", "run_1"]), min_size=1, max_size=3),
    end=st.sampled_from(["RUN_FINISHED", "RUN_ERROR", None]),
)
def test_legal_text_runs_decode_the_same(
    deltas: list[str], ids: list[str], end: str | None
) -> None:
    """Mostly events that pass as they came (the reused ones), ids reused across messages."""
    wires: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "t", "runId": "run_1"}]
    for mid in ids:
        wires.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
        wires += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": d} for d in deltas]
        wires.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
    if end == "RUN_FINISHED":
        wires.append({"type": end, "threadId": "t", "runId": "run_1"})
    elif end == "RUN_ERROR":
        wires.append({"type": end, "message": "boom"})
    same_either_way(b"".join(orjson.dumps(w) + b"\n" for w in wires))


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_recorded_streams_decode_the_same(path: Path) -> None:
    same_either_way(path.read_bytes())


@pytest.mark.parametrize(("reuse", "validations"), [(True, 1), (False, 2)])
def test_an_unchanged_event_is_validated_once(
    monkeypatch: pytest.MonkeyPatch, reuse: bool, validations: int
) -> None:
    """The fast path is taken: a content event that passes as it came is validated by the
    cleaner only (twice with the reuse off: the cleaner, then the emitted wire)."""
    decoder = get_decoder("agui")
    decoder.normalizer.reuse_validated = reuse
    decoder.normalizer.fast_plain = False  # a content event would skip the cleaner
    decoder.feed(
        b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
        b'{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n'
    )
    calls: list[Any] = []
    parse = cleaning.parse_event
    monkeypatch.setattr(cleaning, "parse_event", lambda wire: calls.append(wire) or parse(wire))
    out = decoder.feed(b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}\n')
    assert [event_to_wire(e) for e in out] == [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"}
    ]
    assert len(calls) == validations
