"""The AG-UI passthrough decoder takes an event that passes on as it came
(``AguiNormalizer.push_plain``: TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT, TOOL_CALL_ARGS
for an item open under its id; RAW, CUSTOM, STATE_SNAPSHOT, STATE_DELTA) without cleaning,
sequencing and verifying its wire dict: the decoded events, repairs and error are those of
:meth:`AguiNormalizer.push` for every event (``fast_plain = False``), for streams of openers,
deltas and plain events (clean, with optional, unknown, snake_case or null fields, invalid,
tagged), ends, chunks, results and terminals over a few ids, and for every recorded AG-UI
stream (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import Event
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs import get_decoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.agui._normalizer import AguiNormalizer

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "agui"

Wire = dict[str, Any]


def decode(body: bytes, *, fast: bool, reuse: bool = True) -> Any:
    decoder = get_decoder("agui")
    decoder.normalizer.fast_plain = fast
    decoder.normalizer.reuse_validated = reuse
    out: list[Event] = decoder.feed(body) + decoder.close()
    error = None if decoder.error is None else (type(decoder.error), decoder.error.code)
    return [(type(e), e, event_to_wire(e)) for e in out], decoder.repairs, error


def lines(wires: list[Wire]) -> bytes:
    """JSON lines (the standard library's JSON: integers beyond 64 bits too)."""
    return "".join(json.dumps(w) + "\n" for w in wires).encode()


def same_either_way(body: bytes) -> None:
    for reuse in (True, False):
        assert decode(body, fast=True, reuse=reuse) == decode(body, fast=False, reuse=reuse)


IDS = st.sampled_from(["a", "b", "r"])
DELTA = st.one_of(
    st.text(alphabet=st.sampled_from(["x", " ", "\u00e9", '"']), min_size=1, max_size=3),
    st.sampled_from(["", 5, None, ["x"]]),  # "" is valid, the others are not
)
EXTRAS = st.dictionaries(
    st.sampled_from(
        [
            "rawEvent",
            "timestamp",
            "metadata",
            "subagentRunId",
            "_index",
            "_offset_ms",
            "message_id",
            "tool_call_id",
            "raw_event",
            "source",
        ]
    ),
    st.sampled_from([None, 0, 3, 2**70, -1.5, "s1", "a", [], {}, {"k": [1, None]}, ["x", {}]]),
    max_size=2,
)


@st.composite
def wire_events(draw: st.DrawFn) -> Wire:
    i = draw(IDS)
    kind = draw(
        st.sampled_from(
            [
                "text-open",
                "text-delta",
                "text-end",
                "reasoning-open",
                "reasoning-delta",
                "reasoning-end",
                "call-open",
                "call-args",
                "call-end",
                "result",
                "text-chunk",
                "call-chunk",
                "raw",
                "custom",
                "state-snapshot",
                "state-delta",
                "started",
                "finished",
                "error",
            ]
        )
    )
    delta = draw(DELTA)
    ev: Wire
    if kind == "text-open":
        ev = {"type": "TEXT_MESSAGE_START", "messageId": i, "role": "assistant"}
    elif kind == "text-delta":
        ev = {"type": "TEXT_MESSAGE_CONTENT", "messageId": i, "delta": delta}
    elif kind == "text-end":
        ev = {"type": "TEXT_MESSAGE_END", "messageId": i}
    elif kind == "reasoning-open":
        ev = {"type": "REASONING_MESSAGE_START", "messageId": i, "role": "reasoning"}
    elif kind == "reasoning-delta":
        ev = {"type": "REASONING_MESSAGE_CONTENT", "messageId": i, "delta": delta}
    elif kind == "reasoning-end":
        ev = {"type": "REASONING_MESSAGE_END", "messageId": i}
    elif kind == "call-open":
        ev = {"type": "TOOL_CALL_START", "toolCallId": i, "toolCallName": "f"}
    elif kind == "call-args":
        ev = {"type": "TOOL_CALL_ARGS", "toolCallId": i, "delta": delta}
    elif kind == "call-end":
        ev = {"type": "TOOL_CALL_END", "toolCallId": i}
    elif kind == "result":
        ev = {"type": "TOOL_CALL_RESULT", "toolCallId": i, "messageId": i + "-r", "content": "1"}
    elif kind == "text-chunk":
        ev = {"type": "TEXT_MESSAGE_CHUNK", "messageId": i, "delta": delta}
    elif kind == "call-chunk":
        ev = {"type": "TOOL_CALL_CHUNK", "toolCallId": i, "toolCallName": "f", "delta": delta}
    elif kind == "raw":
        ev = {"type": "RAW", "event": draw(st.sampled_from([{"x": 1}, None, [], "e"]))}
    elif kind == "custom":
        ev = {"type": "CUSTOM", "name": draw(st.sampled_from(["n", "", None, 3])), "value": 1}
    elif kind == "state-snapshot":
        ev = {"type": "STATE_SNAPSHOT", "snapshot": draw(st.sampled_from([{"s": 1}, None, 2]))}
    elif kind == "state-delta":
        ev = {"type": "STATE_DELTA", "delta": draw(st.sampled_from([[], [{"op": "add"}], {}]))}
    elif kind == "started":
        ev = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    elif kind == "finished":
        ev = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    else:
        ev = {"type": "RUN_ERROR", "message": "boom"}
    if kind.endswith(("-delta", "-args")) or kind in ("raw", "custom", "state-snapshot"):
        ev.update(draw(EXTRAS))
        if draw(st.booleans()):  # the keys in another order
            ev = dict(reversed(ev.items()))
    return ev


@settings(max_examples=400)
@given(st.lists(wire_events(), max_size=14), st.booleans())
def test_any_delta_stream_decodes_the_same(events: list[Wire], started: bool) -> None:
    head = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}] if started else []
    same_either_way(lines(head + events))


@given(
    deltas=st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=5),
    extras=EXTRAS,
    kind=st.sampled_from(
        [
            ("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "messageId"),
            ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "toolCallId"),
            (
                "REASONING_MESSAGE_START",
                "REASONING_MESSAGE_CONTENT",
                "REASONING_MESSAGE_END",
                "messageId",
            ),
        ]
    ),
)
def test_legal_runs_decode_the_same(
    deltas: list[str], extras: Wire, kind: tuple[str, str, str, str]
) -> None:
    """Mostly deltas the fast path takes (a well-formed run), with whatever extra fields."""
    start, content, end, key = kind
    opener: Wire = {"type": start, key: "m"}
    if start == "TOOL_CALL_START":
        opener["toolCallName"] = "f"
    wires = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}, opener]
    wires += [{"type": content, key: "m", "delta": d, **extras} for d in deltas]
    wires += [{"type": end, key: "m"}, {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]
    same_either_way(lines(wires))


ITEMS = [
    ("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "messageId"),
    ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "toolCallId"),
    ("REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "messageId"),
]


@st.composite
def interleaved_items(draw: st.DrawFn) -> list[Wire]:
    """A few items (opener, deltas, maybe an END; ids may repeat) interleaved in any order,
    with an odd other event between: ENDs held while other items' deltas come, late deltas,
    reopened ids, results."""
    scripts: list[list[Wire]] = []
    for start, content, end, key in draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=3)):
        i = draw(IDS)
        opener: Wire = {"type": start, key: i}
        if start == "TOOL_CALL_START":
            opener["toolCallName"] = "f"
        script = [opener]
        ended = draw(st.booleans())
        late = draw(st.integers(0, 2)) if ended else 0  # deltas after the END
        for n in range(draw(st.integers(0, 4)) + late):
            if ended and n == late:
                script.append({"type": end, key: i})
            delta: Wire = {"type": content, key: i, "delta": draw(DELTA)}
            script.append({**delta, **draw(EXTRAS)} if draw(st.integers(0, 3)) == 0 else delta)
        if ended and len(script) <= late + 1:
            script.append({"type": end, key: i})
        scripts.append(script)
    out: list[Wire] = []
    while live := [s for s in scripts if s]:
        out.append(live[draw(st.integers(0, len(live) - 1))].pop(0))
        if draw(st.integers(0, 7)) == 0:
            out.append(draw(wire_events()))
    return out


@settings(max_examples=400)
@given(interleaved_items(), st.sampled_from([[], [{"type": "RUN_FINISHED", "threadId": "t"}]]))
def test_interleaved_items_decode_the_same(events: list[Wire], tail: list[Wire]) -> None:
    same_either_way(lines([{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}, *events, *tail]))


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_recorded_streams_decode_the_same(path: Path) -> None:
    same_either_way(path.read_bytes())


@pytest.mark.parametrize(
    ("line", "pushed"),
    [
        (b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}', 0),
        (b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi","_index":3}', 0),
        (b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":5}', 1),  # invalid
        (b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"x","delta":"hi"}', 1),  # not open
        (b'{"type":"TEXT_MESSAGE_CONTENT","message_id":"m","delta":"hi"}', 1),  # renamed
        (b'{"type":"RAW","event":{"a":[1]},"source":"s","_index":1}', 0),
        (b'{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}', 0),
        (b'{"type":"RAW","event":{},"raw_event":{}}', 1),  # renamed
        (b'{"type":"RAW","event":{},"subagentRunId":"s"}', 1),  # a tag to check
        (b'{"type":"CUSTOM","name":"n","value":1,"timestamp":null}', 1),  # a null dropped
    ],
)
def test_a_plain_event_skips_push(
    monkeypatch: pytest.MonkeyPatch, line: bytes, pushed: int
) -> None:
    """The fast path is taken for an event that passes on as it came, and only then."""
    decoder = get_decoder("agui")
    decoder.feed(
        b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
        b'{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n'
    )
    calls: list[Any] = []
    push = AguiNormalizer.push
    monkeypatch.setattr(
        AguiNormalizer, "push", lambda self, raw: calls.append(raw) or push(self, raw)
    )
    decoder.feed(line + b"\n")
    assert len(calls) == pushed
