"""StoreGuard: the producer-side guard of a run, before its events are stored (pure, no I/O).

Issue 12 item 3: nothing illegal is stored or served. The gateway's pump (``gateway/runs/
pump.py``) passes every event a run produces through :meth:`StoreGuard.push` and stores what
comes out. The legality rules are the AG-UI transition tables (:data:`~agui_codecs.transitions.
RUN_TABLE`, :data:`~agui_codecs.transitions.LIFECYCLES`, applied by
:class:`~agui_codecs.transitions.AguiVerifier`; ``@ag-ui/client`` 1.0.0 ``src/verify/verify.ts``,
after ``src/chunks/transform.ts``); this module only decides what to do with an event they
refuse:

==================================  ===========================================================
refused event (verifier fault)      what is stored instead (``repairs`` key)
==================================  ===========================================================
any first event but RUN_STARTED /   a RUN_STARTED ``{threadId, runId, protocolVersion: "1.0"}``
RUN_ERROR (first-event-...)         with the run's ids, then the event (``run-started-synthesized``)
RUN_STARTED inside the run          nothing when it carries nothing but ``threadId`` / ``runId`` /
(run-started-while-active)          ``protocolVersion`` / ``timestamp``: absorbed
                                    (``run-started-absorbed``); the upstream's own RUN_STARTED
                                    after :meth:`StoreGuard.announce` is absorbed without counting
an opener of an open id (text,      nothing when it equals the open one's opener (but for
tool call, reasoning, step,         ``timestamp``): absorbed (``duplicate-start-absorbed``)
subagent: ...-already-open)
TEXT_MESSAGE_CONTENT /              its START first (``role`` ``assistant`` / ``reasoning``, the
REASONING_MESSAGE_CONTENT of an id  event's ``subagentRunId``), when the id was never opened in
never opened (...-without-start)    the run (``start-synthesized``)
an END of an id already closed      nothing: the close already happened (``duplicate-end-absorbed``)
(...-end-without-start, step-...)
RUN_FINISHED while items are open   END events closing them first (tool calls, text, reasoning
(run-finished-while-open)           messages, reasoning spans, steps, subagents), then
                                    RUN_FINISHED (``closed-before-terminal``)
anything else                       what is open closed, then RUN_ERROR ``{code:
                                    "UPSTREAM_PROTOCOL_ERROR", message: "agui/verify/<fault>:
                                    ...", metadata: {rule, eventType, ids}}``; the run ends there
==================================  ===========================================================

Content (text and argument deltas) is never dropped: it is stored once, or the run ends with
that typed RUN_ERROR after everything before the refused event. A legal stream passes unchanged
(the same dicts, in the same order). Items a ``*_CHUNK`` stream opened are not closed with
explicit END events (the client closes them itself: :class:`~agui_codecs.core.RunFold`).
Events after the terminal event are not part of the run: :meth:`StoreGuard.push` returns
nothing for them (the pump stops reading at the terminal event).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

from ..errors import RemoteProtocolError
from ..transitions import (
    LIFECYCLE_BY_EVENT,
    LIFECYCLES,
    AguiVerifier,
    Fault,
    Finding,
    Lifecycle,
    Phase,
)
from .chunks import CHUNK_TYPES, ChunkError, ChunkExpander

__all__ = ["GUARD_ERROR_CODE", "PROTOCOL_VERSION", "StoreGuard"]

JsonObject = dict[str, Any]

PROTOCOL_VERSION: Final = "1.0"
"""``protocolVersion`` of a synthesized RUN_STARTED (AG-UI 1.0 ``RunStartedEvent``)."""

GUARD_ERROR_CODE: Final = RemoteProtocolError.code
"""``code`` of the RUN_ERROR ending a run the guard cannot repair (``UPSTREAM_PROTOCOL_ERROR``,
:class:`~agui_codecs.errors.RemoteProtocolError`: the upstream broke the AG-UI lifecycle)."""

_SAME_RUN: Final = frozenset({"type", "threadId", "runId", "protocolVersion", "timestamp"})
"""RUN_STARTED fields a repeat may carry and still say nothing new (the run's ids are fixed by
the gateway before the decoder is built; an upstream's own are not kept)."""

_CONTENT_OPENERS: Final[dict[str, tuple[str, str]]] = {
    "TEXT_MESSAGE_CONTENT": ("TEXT_MESSAGE_START", "assistant"),
    "REASONING_MESSAGE_CONTENT": ("REASONING_MESSAGE_START", "reasoning"),
}
"""Content that may be opened first: the START type and its ``role``."""

_STATELESS: Final = frozenset(
    {t for lc in LIFECYCLES for t in lc.continuers}
    | {"CUSTOM", "RAW", "STATE_DELTA", "STATE_SNAPSHOT", "ACTIVITY_DELTA"}
    | {"REASONING_ENCRYPTED_VALUE"}
)
"""Event types whose verifier step inside an active run changes no state, legal or not (the
continuations of :data:`LIFECYCLES` and the events :class:`AguiVerifier` only checks): the
guard's hot path steps them without the snapshot a refused event needs (deltas are most of a
run)."""

_OPEN_CONTENT: Final[dict[Any, Lifecycle]] = {
    etype: lc for etype, (lc, role) in LIFECYCLE_BY_EVENT.items() if role == "continue"
}
"""Deltas (text, reasoning, tool call arguments) by type: :meth:`StoreGuard.push` lets one of
an open item of an active run out without stepping the verifier (its step would find nothing
and change nothing)."""
_ABSENT: Final = object()

_CLOSE_ORDER: Final = (
    ("tool-call", "TOOL_CALL_END", "toolCallId", "toolCall"),
    ("text-message", "TEXT_MESSAGE_END", "messageId", "message"),
    ("reasoning-message", "REASONING_MESSAGE_END", "messageId", "reasoning"),
    ("reasoning-span", "REASONING_END", "messageId", "reasoning"),
)
"""Closers of open items, in the order :meth:`RunFold.closing_events` uses (steps and
subagents follow, newest first): kind, END type, id field, owner bucket."""


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return {k: v for k, v in a.items() if k != "timestamp"} == {
        k: v for k, v in b.items() if k != "timestamp"
    }


class StoreGuard:
    """What of a run's events may be stored (see the module docstring); one per run.

    Args:
        thread_id, run_id: the run's public ids (of a synthesized RUN_STARTED).

    Attributes:
        verifier: the :class:`~agui_codecs.transitions.AguiVerifier` of what was let out.
        repairs: repair key (module docstring) -> count.
        violation: the kit's rule id (``agui/verify/<fault>``, ``agui/chunks/<rule>``) of the
            event that ended the run with RUN_ERROR ``UPSTREAM_PROTOCOL_ERROR``, else None.
        ended: True once a terminal event was let out.
    """

    def __init__(self, *, thread_id: str, run_id: str) -> None:
        self.thread_id, self.run_id = thread_id, run_id
        self.verifier = AguiVerifier()
        self.repairs: Counter[str] = Counter()
        self.violation: str | None = None
        self._chunks = ChunkExpander()
        self._openers: dict[tuple[str, str | None, str], JsonObject] = {}
        self._seen: set[tuple[str, str | None, str]] = set()
        self._closed: set[tuple[str, str | None, str]] = set()
        self._announced = False
        self._chunk_opened: set[tuple[str, str]] = set()

    @property
    def ended(self) -> bool:
        """True once RUN_FINISHED or RUN_ERROR was let out."""
        return self.verifier.phase in (Phase.FINISHED, Phase.ERRORED)

    def run_started(self) -> JsonObject:
        """The RUN_STARTED the guard synthesizes: the run's ids and ``protocolVersion`` 1.0."""
        return {
            "type": "RUN_STARTED",
            "threadId": self.thread_id,
            "runId": self.run_id,
            "protocolVersion": PROTOCOL_VERSION,
        }

    def announce(self) -> JsonObject:
        """Let out :meth:`run_started` before the upstream's first event (issue 16 item 7);
        the upstream's own RUN_STARTED, if it comes first, is then absorbed (not a repair).

        Raises:
            ValueError: an event was already let out.
        """
        if self.verifier.phase is not Phase.IDLE:
            raise ValueError("announce() must come before any event")
        event = self.run_started()
        self.verifier.step(event)
        self._announced = True
        return event

    # -- the guard ------------------------------------------------------------------------
    def push(self, event: Mapping[str, Any]) -> list[JsonObject]:
        """The events to store for the run's next ``event`` (an AG-UI wire dict), in order.

        Returns ``[event]`` itself when it is legal, a repair (module docstring) or, when
        it cannot be repaired, the closers of what is open and the ending RUN_ERROR; ``[]``
        for an absorbed event and for anything after the terminal event.
        """
        wire = event if isinstance(event, dict) else dict(event)
        announced, self._announced = self._announced, False
        verifier = self.verifier
        if verifier.phase is Phase.ACTIVE and not self._chunks.lanes:
            # the hot path: a delta of an open item, whose step finds nothing and changes
            # nothing (nor does _track); tests/codecs/test_store_guard_fast_path.py
            lc = _OPEN_CONTENT.get(wire.get("type"))
            if lc is not None:
                eid = wire.get(lc.id_field)
                if type(eid) is str and eid in verifier.open[lc.kind]:
                    tag = wire.get("subagentRunId", _ABSENT)
                    if tag is _ABSENT:
                        return [wire]
                    if type(tag) is str:
                        owner = verifier.owners[lc.owner or "message"].get(eid)
                        if owner is None or owner.tag == tag:
                            return [wire]
        elif self.ended:
            return []
        etype = wire.get("type")
        if announced and etype == "RUN_STARTED":
            return []  # the upstream's own start: the announced one stands for it
        out: list[JsonObject] = []
        if etype in CHUNK_TYPES or self._chunks.lanes:
            self._push_expanded(wire, out)
        else:
            self._push(wire, out)
        return out

    def _push_expanded(self, wire: JsonObject, out: list[JsonObject]) -> None:
        """A chunk, or any event while a chunk stream is open: the client's expansion is what
        the tables judge; the event itself is what is stored."""
        if self.verifier.phase is Phase.IDLE and wire.get("type") not in ("RUN_ERROR",):
            self._synthesize_start(out)
        saved = copy.deepcopy(self._chunks), self.verifier._snapshot()
        try:
            expanded = self._chunks.expand(wire)
        except ChunkError as exc:
            self._chunks = saved[0]
            self.verifier._restore(saved[1])
            self._fail(out, f"agui/chunks/{exc.rule}", exc.message, exc.ids, wire.get("type"))
            return
        if wire.get("type") not in CHUNK_TYPES:  # lanes closed by the client, then the event
            for end in expanded[:-1]:
                self.verifier.step(end)
                self._track(end)
            before = len(out)
            self._push(wire, out)
            if len(out) == before:  # absorbed: the client never sees it, its lanes stay open
                self._chunks = saved[0]
                self.verifier._restore(saved[1])
            return
        for ev in expanded:
            found = self.verifier.step(ev, apply_faulty=False)
            if found is not None:
                self._chunks = saved[0]
                self.verifier._restore(saved[1])
                self._fail_on(out, found, ev.get("type"))
                return
            self._track(ev, chunk=True)
        out.append(wire)

    def _push(self, ev: JsonObject, out: list[JsonObject], *, retry: bool = True) -> None:
        if self.verifier.phase is Phase.ACTIVE and ev.get("type") in _STATELESS:
            found = self.verifier.step(ev)  # changes nothing either way: no snapshot needed
        else:
            found = self.verifier.step(ev, apply_faulty=False)
        if found is None:
            self._track(ev)
            out.append(ev)
            return
        etype = str(ev.get("type"))
        fault = found.fault
        if retry and fault is Fault.FIRST_EVENT:
            self._synthesize_start(out)  # the run is active now: this fault cannot come again,
            return self._push(ev, out)  # and the event may still need a repair of its own
        if fault is Fault.RUN_STARTED_WHILE_ACTIVE and not set(ev) - _SAME_RUN:
            self.repairs["run-started-absorbed"] += 1
            return None
        if retry and fault is Fault.FINISHED_WHILE_OPEN:
            self.repairs["closed-before-terminal"] += 1
            out.extend(self._closers())
            return self._push(ev, out, retry=False)
        entry = LIFECYCLE_BY_EVENT.get(etype)
        if entry is not None:
            lc, role = entry
            key = self._key(lc.kind, ev)
            if role == "open" and fault is lc.faults[0] and key in self._openers:
                if _same(self._openers[key], ev):
                    self.repairs["duplicate-start-absorbed"] += 1
                    return None
            elif role == "close" and fault is lc.faults[2] and key in self._closed:
                self.repairs["duplicate-end-absorbed"] += 1
                return None
            elif (
                retry
                and role == "continue"
                and fault is lc.faults[1]
                and etype in _CONTENT_OPENERS
                and key not in self._seen
            ):
                start_type, role_name = _CONTENT_OPENERS[etype]
                start: JsonObject = {"type": start_type, lc.id_field: ev.get(lc.id_field)}
                start["role"] = role_name
                if ev.get("subagentRunId") is not None:
                    start["subagentRunId"] = ev["subagentRunId"]
                if self.verifier.step(start, apply_faulty=False) is None:
                    self.repairs["start-synthesized"] += 1
                    self._track(start)
                    out.append(start)
                    return self._push(ev, out, retry=False)
        self._fail_on(out, found, etype)
        return None

    # -- helpers --------------------------------------------------------------------------
    def _synthesize_start(self, out: list[JsonObject]) -> None:
        start = self.run_started()
        self.verifier.step(start)
        self.repairs["run-started-synthesized"] += 1
        out.append(start)

    @staticmethod
    def _key(kind: str, ev: Mapping[str, Any]) -> tuple[str, str | None, str]:
        entry = LIFECYCLE_BY_EVENT[str(ev.get("type"))]
        tag = ev.get("subagentRunId") if kind == "step" else None
        return kind, None if tag is None else str(tag), str(ev.get(entry[0].id_field))

    def _track(self, ev: Mapping[str, Any], *, chunk: bool = False) -> None:
        entry = LIFECYCLE_BY_EVENT.get(str(ev.get("type")))
        if entry is None:
            return
        lc, role = entry
        if role == "continue":
            return
        key = self._key(lc.kind, ev)
        if role == "open":
            self._openers[key] = dict(ev)
            self._seen.add(key)
            self._closed.discard(key)
            if chunk:
                self._chunk_opened.add((lc.kind, key[2]))
        elif role == "close":
            self._openers.pop(key, None)
            self._closed.add(key)
            self._chunk_opened.discard((lc.kind, key[2]))

    def _closers(self) -> list[JsonObject]:
        """END events closing what is open (let out through the verifier), in
        :data:`_CLOSE_ORDER`, then steps and subagents, newest first. Chunk lanes are closed
        in the verifier only (the client closes them itself on the next event)."""
        for end in self._chunks.close_all():
            self.verifier.step(end)
            self._track(end)
        v = self.verifier
        out: list[JsonObject] = []
        for kind, end_type, field, bucket in _CLOSE_ORDER:
            for eid in v.open_ids(kind):
                closer: JsonObject = {"type": end_type, field: eid}
                owner = v.owners[bucket].get(eid)
                if owner is not None and owner.tag is not None:
                    closer["subagentRunId"] = owner.tag
                out.append(closer)
        for key in reversed(list(v.open["step"])):
            tag, name = key.split("\x00", 1)
            closer = {"type": "STEP_FINISHED", "stepName": name}
            if tag:
                closer["subagentRunId"] = tag[1:]
            out.append(closer)
        for sid in reversed(v.open_ids("subagent")):
            out.append({"type": "SUBAGENT_FINISHED", "subagentRunId": sid})
        let_out = []
        for closer in out:
            if v.step(closer, apply_faulty=False) is None:
                self._track(closer)
                let_out.append(closer)
        return let_out

    def _fail_on(self, out: list[JsonObject], found: Finding, etype: Any) -> None:
        self._fail(out, f"agui/verify/{found.fault.value}", found.message, found.ids, etype)

    def _fail(
        self, out: list[JsonObject], rule: str, message: str, ids: tuple[str, ...], etype: Any
    ) -> None:
        """Close what is open and end the run with RUN_ERROR ``UPSTREAM_PROTOCOL_ERROR``."""
        self.violation = rule
        out.extend(self._closers())
        error: JsonObject = {
            "type": "RUN_ERROR",
            "message": f"{rule}: {message}",
            "code": GUARD_ERROR_CODE,
            "metadata": {"rule": rule, "eventType": str(etype), "ids": list(ids)},
        }
        self.verifier.step(error)
        out.append(error)
