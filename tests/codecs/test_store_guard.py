"""StoreGuard (``agui_codecs.core.guard``, issue 12 item 3): nothing illegal is stored.

Event sequences are generated from the AG-UI transition tables themselves
(:data:`~agui_codecs.transitions.LIFECYCLES`, also under a subagent, and the run-level types of
:data:`~agui_codecs.transitions.RUN_TABLE`), legal ones (each next event one the verifier
accepts) and arbitrary ones, and fed through the guard the way the pump feeds it (until the
guard lets a terminal event out; an input without one is closed as the pump closes a truncated
run: ``RunFold.closing_events`` and RUN_ERROR ``UPSTREAM_TRUNCATED``, through the guard too).
The verdicts come from the conformance kit (``conformance.check_events``, proven against
``@ag-ui/client`` 1.0.0 by ``tests/conformance/test_differential.py``), not from the guard:

* the stored stream has no error-level violation;
* every text / argument delta fed is stored exactly once, or the run ends with RUN_ERROR
  ``UPSTREAM_PROTOCOL_ERROR`` and every delta fed before the refused event is stored exactly
  once;
* a legal input is stored unchanged.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.core import GUARD_ERROR_CODE, RunFold, StoreGuard
from agui_codecs.transitions import LIFECYCLES, RUN_TABLE, AguiVerifier
from conformance import check_events

IDS = {
    "messageId": ["m1", "m2"],
    "toolCallId": ["c1", "c2"],
    "stepName": ["s1", "s2"],
    "subagentRunId": ["sa", "sb"],
}
EXTRA: dict[str, dict[str, Any]] = {
    "TEXT_MESSAGE_START": {"role": "assistant"},
    "TOOL_CALL_START": {"toolCallName": "lookup"},
    "REASONING_MESSAGE_START": {"role": "reasoning"},
    "SUBAGENT_STARTED": {"name": "helper"},
    "SUBAGENT_ERROR": {"message": "helper failed"},
}
RUN_TYPES = sorted({etype for _, etype in RUN_TABLE if etype != "*"})
"""RUN_STARTED, RUN_FINISHED, RUN_ERROR: the run-level types the table names."""


def _templates() -> list[dict[str, Any]]:
    """One event per (lifecycle event type, id) of the tables, the same under subagent ``sa``
    (``subagentRunId``), and the run-level ones, plus a few the tables treat apart."""
    out: list[dict[str, Any]] = []
    for lc in LIFECYCLES:
        for etype in (lc.opener, *sorted(lc.continuers), *sorted(lc.closers)):
            for eid in IDS[lc.id_field]:
                out.append({"type": etype, lc.id_field: eid, **EXTRA.get(etype, {})})
    out += [{**e, "subagentRunId": "sa"} for e in out if "subagentRunId" not in e]
    for etype in RUN_TYPES:
        if etype == "RUN_ERROR":
            out.append({"type": etype, "message": "upstream failed", "code": "UPSTREAM_ERROR"})
        else:
            out.append({"type": etype, "threadId": "thread-1", "runId": "run-1"})
    out.append(
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1", "parentRunId": "p"}
    )
    out.append({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "user"})
    out.append(
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sb", "name": "helper"}
        | {"parentSubagentRunId": "sa"}
    )
    out.append({"type": "CUSTOM", "name": "note", "value": 1})
    out.append({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m3", "delta": ""})
    return out


TEMPLATES = _templates()
CONTENT = {"TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS", "REASONING_MESSAGE_CONTENT"}
CONTENT_TYPES = CONTENT | {"TEXT_MESSAGE_CHUNK"}


def _numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``events`` whose deltas are all different (``<n>;``), so each can be found."""
    counter = itertools.count()
    return [
        {**e, "delta": f"<{next(counter)}>;"} if e["type"] in CONTENT_TYPES else dict(e)
        for e in events
    ]


def guarded(
    events: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], int | None, int, StoreGuard]:
    """What the pump stores for ``events``, the index of the event the guard refused (if
    any) and how many events were fed (the pump reads nothing after the terminal event)."""
    guard = StoreGuard(thread_id="thread-1", run_id="run-1")
    fold = RunFold()
    stored: list[dict[str, Any]] = []
    refused: int | None = None
    fed = 0
    for index, event in enumerate(events):
        out = guard.push(event)
        fed = index + 1
        fold.apply_all(out)
        stored += out
        if guard.violation is not None:
            refused = index
        if guard.ended:
            break
    if not guard.ended:
        error = {"type": "RUN_ERROR", "message": "cut", "code": "UPSTREAM_TRUNCATED"}
        for event in (*fold.closing_events(), error):
            stored += guard.push(event)
    return stored, refused, fed, guard


def _deltas(events: list[dict[str, Any]]) -> list[str]:
    return [e["delta"] for e in events if e["type"] in CONTENT_TYPES and e.get("delta")]


def assert_guarded(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stored, refused, fed, _ = guarded(events)
    report = check_events(stored)
    assert report.errors == [], ([v.rule_id for v in report.errors], stored)
    kept = _deltas(stored)
    assert len(kept) == len(set(kept)), "a delta was stored twice"
    before = events[: refused if refused is not None else fed]
    assert set(_deltas(before)) <= set(kept), "a delta was lost"
    if refused is not None:
        assert stored[-1]["type"] == "RUN_ERROR" and stored[-1]["code"] == GUARD_ERROR_CODE
        assert stored[-1]["metadata"]["rule"].startswith("agui/")
    return stored


def _accepts(verifier: AguiVerifier, event: dict[str, Any]) -> bool:
    saved = verifier._snapshot()
    found = verifier.step(event, apply_faulty=False)
    verifier._restore(saved)
    return found is None


@st.composite
def legal_runs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A legal run walked through the tables: each event one the verifier accepts next."""
    verifier = AguiVerifier()
    run: list[dict[str, Any]] = []
    first = {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"}
    verifier.step(first)
    run.append(first)
    inner = [t for t in TEMPLATES if t["type"] not in RUN_TYPES and "CHUNK" not in t["type"]]
    for _ in range(draw(st.integers(0, 25))):
        legal = [t for t in inner if _accepts(verifier, t)]
        if not legal:
            break
        event = dict(draw(st.sampled_from(legal)))
        verifier.step(event)
        run.append(event)
    for kind, end, field in (
        ("tool-call", "TOOL_CALL_END", "toolCallId"),
        ("text-message", "TEXT_MESSAGE_END", "messageId"),
        ("reasoning-message", "REASONING_MESSAGE_END", "messageId"),
        ("reasoning-span", "REASONING_END", "messageId"),
    ):
        for eid in verifier.open_ids(kind):
            run.append({"type": end, field: eid})
    for key in verifier.open["step"]:
        tag, name = key.split("\x00", 1)
        run.append(
            {"type": "STEP_FINISHED", "stepName": name}
            | ({"subagentRunId": tag[1:]} if tag else {})
        )
    for sid in reversed(verifier.open_ids("subagent")):
        run.append({"type": "SUBAGENT_FINISHED", "subagentRunId": sid})
    ending = draw(st.sampled_from(["RUN_FINISHED", "RUN_ERROR"]))
    if ending == "RUN_FINISHED":
        run.append({"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"})
    else:
        run.append({"type": "RUN_ERROR", "message": "upstream failed", "code": "UPSTREAM_ERROR"})
    return _numbered(run)


any_events = st.lists(st.sampled_from(TEMPLATES), max_size=30).map(_numbered)


@settings(max_examples=100, deadline=None)
@given(events=legal_runs())
def test_a_legal_run_is_stored_unchanged(events: list[dict[str, Any]]) -> None:
    assert check_events(events).errors == []  # the generator's own check
    stored, refused, _, guard = guarded(events)
    assert refused is None and not guard.repairs
    assert stored == events


@settings(max_examples=200, deadline=None)
@given(events=any_events)
def test_any_sequence_is_stored_legal_without_losing_a_delta(events: list[dict[str, Any]]) -> None:
    assert_guarded(events)


@settings(max_examples=100, deadline=None)
@given(events=legal_runs(), data=st.data())
def test_a_legal_run_with_one_event_moved_or_repeated_is_stored_legal(
    events: list[dict[str, Any]], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(events) - 1), label="index")
    target = data.draw(st.integers(0, len(events)), label="target")
    mutated = list(events)
    if data.draw(st.booleans(), label="repeat"):
        mutated.insert(target, dict(events[index]))
    else:
        mutated.insert(target, mutated.pop(index))
    assert_guarded(_numbered(mutated))  # a repeated delta is new content: its own number


# -- the repairs the tables allow (expected events from verify.ts rules) -----------------
def test_a_missing_run_started_is_synthesized_with_the_runs_ids_and_protocol_version() -> None:
    stored = assert_guarded([{"type": "STEP_STARTED", "stepName": "s"}])
    assert stored[0] == {
        "type": "RUN_STARTED",
        "threadId": "thread-1",
        "runId": "run-1",
        "protocolVersion": "1.0",
    }


def test_content_as_the_first_event_gets_both_its_run_and_its_message_started() -> None:
    """Two repairs for one event (found by the announce property in CI): the synthesized
    RUN_STARTED, then the TEXT_MESSAGE_START the content needs; the content is kept."""
    guard = StoreGuard(thread_id="thread-1", run_id="run-1")
    content = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "hi"}
    stored = guard.push(content)
    assert [e["type"] for e in stored] == ["RUN_STARTED", "TEXT_MESSAGE_START", content["type"]]
    assert stored[-1] == content and guard.violation is None
    assert guard.repairs["run-started-synthesized"] == guard.repairs["start-synthesized"] == 1


def test_announce_absorbs_the_upstreams_own_run_started_without_counting_it() -> None:
    guard = StoreGuard(thread_id="thread-1", run_id="run-1")
    assert guard.announce()["type"] == "RUN_STARTED"
    assert guard.push({"type": "RUN_STARTED", "threadId": "a", "runId": "b"}) == []
    assert not guard.repairs


def test_run_finished_while_open_closes_the_open_items_first() -> None:
    events = [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
        {"type": "STEP_STARTED", "stepName": "s"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"},
    ]
    stored = assert_guarded(events)
    assert stored[4:] == [
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "STEP_FINISHED", "stepName": "s"},
        events[-1],
    ]


def test_a_repeat_start_with_other_fields_ends_the_run_with_the_typed_error() -> None:
    events = [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user"},
    ]
    stored = assert_guarded(events)
    assert stored[:3] == events[:3]
    assert stored[3] == {"type": "TEXT_MESSAGE_END", "messageId": "m"}
    assert stored[4]["code"] == "UPSTREAM_PROTOCOL_ERROR"
    assert stored[4]["metadata"]["rule"] == "agui/verify/text-start-already-open"


def test_the_stream_the_hunt_found_is_stored_legal() -> None:
    """What the openai-responses decoder emitted for ``kit-rejects-openai-responses-
    f75f963a71d8.bin`` before its fix (a second TOOL_CALL_START of an open call, a
    TOOL_CALL_END of a closed one): repaired, nothing lost."""
    call = {"type": "TOOL_CALL_START", "toolCallId": "fs_1", "toolCallName": "file_search"}
    call["metadata"] = {"providerExecuted": True}
    events = [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
        call,
        dict(call),
        {"type": "TOOL_CALL_ARGS", "toolCallId": "fs_1", "delta": '{"queries":["capital?"]}'},
        {"type": "TOOL_CALL_END", "toolCallId": "fs_1"},
        {"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "fs_1", "content": "{}"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Paris."},
        {"type": "TOOL_CALL_END", "toolCallId": "fs_1", "metadata": {"incomplete": True}},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_ERROR", "message": "cut", "code": "UPSTREAM_TRUNCATED"},
    ]
    assert check_events(events).errors  # the kit rejects it as decoded
    stored, refused, _, guard = guarded(events)
    assert refused is None and check_events(stored).errors == []
    assert stored == [e for i, e in enumerate(events) if i not in (2, 8)]
    assert guard.repairs == {"duplicate-start-absorbed": 1, "duplicate-end-absorbed": 1}
