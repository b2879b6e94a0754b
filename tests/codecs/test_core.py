"""The AG-UI semantics core (agui_codecs.core): chunk tables, the fold over chunk lanes, and
strict mode, where a producer asked for an illegal event raises IllegalEventError."""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import EventType

from agui_codecs import IllegalEventError, RunBuilder, RunFold
from agui_codecs.core import (
    CHUNK_TYPES,
    CLOSE_ALL_LANES,
    CLOSE_OWN_LANE,
    CLOSE_SUBAGENT_LANE,
    KEEP_LANES,
    ChunkError,
    ChunkExpander,
    strict,
)
from agui_codecs.identity import provider_id


def test_lane_tables_cover_every_event_type_once() -> None:
    """Each AG-UI type is a chunk, closes its lane, every lane, its subagent's, or none:
    transform.ts decides for every type, and so must the tables."""
    groups = [CHUNK_TYPES, CLOSE_OWN_LANE, CLOSE_ALL_LANES, CLOSE_SUBAGENT_LANE, KEEP_LANES]
    every = [t for g in groups for t in g]
    assert len(every) == len(set(every))
    assert set(every) == {t.value for t in EventType} - {
        "THINKING_START",
        "THINKING_END",
        "THINKING_TEXT_MESSAGE_START",
        "THINKING_TEXT_MESSAGE_CONTENT",
        "THINKING_TEXT_MESSAGE_END",
    }


def test_each_subagent_has_its_own_lane() -> None:
    """transform.ts keeps one pending stream per subagentRunId: the parent's chunk does not
    close a subagent's stream."""
    x = ChunkExpander()
    out = [
        *x.expand({"type": "TEXT_MESSAGE_CHUNK", "messageId": "p", "delta": "a"}),
        *x.expand(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "s", "delta": "b", "subagentRunId": "sa"}
        ),
        *x.expand({"type": "TEXT_MESSAGE_CHUNK", "delta": "c"}),
        *x.expand({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
    ]
    assert [(e["type"], e.get("messageId"), e.get("delta")) for e in out] == [
        ("TEXT_MESSAGE_START", "p", None),
        ("TEXT_MESSAGE_CONTENT", "p", "a"),
        ("TEXT_MESSAGE_START", "s", None),
        ("TEXT_MESSAGE_CONTENT", "s", "b"),
        ("TEXT_MESSAGE_CONTENT", "p", "c"),
        ("TEXT_MESSAGE_END", "p", None),
        ("TEXT_MESSAGE_END", "s", None),
        ("RUN_FINISHED", None, None),
    ]


def test_chunk_the_client_rejects_raises() -> None:
    with pytest.raises(ChunkError) as caught:
        ChunkExpander().expand({"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "delta": "{}"})
    assert caught.value.rule == "first-tool-chunk-without-name"


def test_fold_keeps_interleaved_lanes_apart() -> None:
    events: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "p", "delta": "Hel"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "s", "delta": "sub", "subagentRunId": "sa"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"},
    ]
    fold = RunFold().apply_all(events)
    assert {m: "".join(t.content) for m, t in fold.open_text.items()} == {"p": "Hello", "s": "sub"}
    assert all(t.chunk for t in fold.open_text.values())
    assert fold.closing_events() == []  # the client closes chunk streams itself
    fold.apply({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    assert fold.open_text == {}
    assert [(p["messageId"], p["text"], p["state"]) for p in fold.parts] == [
        ("p", "Hel", "done"),
        ("s", "sub", "done"),
        ("p", "lo", "done"),
    ]


@pytest.fixture
def strict_mode() -> Any:
    before = strict()
    strict(True)
    yield
    strict(before)


def test_builder_raises_on_text_after_the_terminal_event(strict_mode: None) -> None:
    run = RunBuilder(thread_id="t", run_id="r", provider="test")
    run.text("hi")
    run.finish(finish_reason="stop")
    with pytest.raises(IllegalEventError) as caught:
        run.text("late")
    assert caught.value.fault == "event-after-run-finished"
    assert caught.value.event_type == "TEXT_MESSAGE_START"


def test_builder_gives_a_second_call_with_an_open_calls_id_its_own_id(strict_mode: None) -> None:
    # Issue 11 (identity): a reused provider id no longer makes a second TOOL_CALL_START of an
    # open call (which strict mode refused as ``tool-start-already-open``): the second call
    # gets a derived id, legal in strict mode, that maps back to the provider's id.
    run = RunBuilder(thread_id="t", run_id="r", provider="test")
    first = run.tool_start(0, "search", "call_1")
    second = run.tool_start(1, "search", "call_1")
    assert first == "call_1" and second != first
    assert provider_id(second) == "call_1"


def test_builder_without_strict_mode_does_not_check() -> None:
    before = strict()
    strict(False)
    try:
        run = RunBuilder(thread_id="t", run_id="r", provider="test")
        run.finish(finish_reason="stop")
        run.text("late")  # not checked: the decoder base and the pump guard the stream
        assert [e.type.value for e in run.drain()][-1] == "TEXT_MESSAGE_CONTENT"
    finally:
        strict(before)
