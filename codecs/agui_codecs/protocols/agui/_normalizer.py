"""Sans-I/O AG-UI repair behind the ``agui`` decoder: upstream wire dicts in, legal wire dicts out.

:class:`AguiNormalizer` cleans each event against ``ag_ui.core`` (:mod:`._cleaning`), expands
``*_CHUNK`` events with the client's :class:`~agui_codecs.core.chunks.ChunkExpander` (the one
the conformance kit and RunFold use; its rejections repaired on top), repairs the bracket
sequence, holding ENDs so that late content is reordered rather than dropped, and passes every
output through :class:`~agui_codecs.transitions.AguiVerifier`. The repair keys it counts are
listed in :mod:`agui_codecs.protocols.agui.decoder`, which wraps it as a :class:`StreamDecoder`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ag_ui.core import (
    CustomEvent,
    Event,
    RawEvent,
    ReasoningMessageContentEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)
from pydantic import BaseModel, ValidationError

from ...core.chunks import CHUNKS, ChunkError, ChunkSpec
from ...errors import MalformedUpstreamError
from ...transitions import AGUI_TERMINAL, ANY, LIFECYCLE_BY_EVENT, RUN_TABLE, Phase
from ._carried import args_in as _args_in
from ._cleaning import _CANONICAL, _FIELDS
from ._holds import _END, _PHASE, HOLD_EVENTS, HOLD_RESULT_BYTES, Wire
from ._identity import AguiIdentity
from ._stray import HOLD_STRAY_BYTES

__all__ = ["HOLD_EVENTS", "HOLD_RESULT_BYTES", "HOLD_STRAY_BYTES", "AguiNormalizer", "Wire"]

_LIFECYCLE_KIND = {"text": "text-message", "tool": "tool-call", "reasoning": "reasoning-message"}

_PlainSpec = tuple[str | None, str, frozenset[str], frozenset[str], Callable[[Wire], Event]]


def _plain_spec(cls: type[BaseModel]) -> tuple[str, _PlainSpec]:
    etype = str(cls.model_fields["type"].default.value)
    active = RUN_TABLE.get((Phase.ACTIVE, etype), RUN_TABLE[(Phase.ACTIVE, ANY)])
    assert active is Phase.ACTIVE and etype not in CHUNKS  # the run's phase stays as it is
    entry = LIFECYCLE_BY_EVENT.get(etype)
    assert entry is None or entry[1] == "continue"  # the verifier only reads its state
    keys = _CANONICAL[etype] - {"subagentRunId"}  # (a tag the verifier checks)
    names = frozenset(_FIELDS[etype])
    validate = cls.__pydantic_validator__.validate_python
    if entry is None:
        return etype, (None, "", keys, names, validate)
    return etype, (entry[0].kind, entry[0].id_field, keys, names, validate)


_PLAIN: Final[dict[str, _PlainSpec]] = dict(
    _plain_spec(cls)
    for cls in (
        TextMessageContentEvent,
        ReasoningMessageContentEvent,
        ToolCallArgsEvent,
        RawEvent,
        CustomEvent,
        StateSnapshotEvent,
        StateDeltaEvent,
    )
)
"""The event types :meth:`AguiNormalizer.push_plain` takes -> (the lifecycle kind of a delta,
else None; a delta's id field; the keys the event may have as it comes; the names of its
fields, wire and Python; its class's core validator). Inside a run none of them changes the
run's phase or the verifier's state, and the normalizer's sequencing passes those that name
no item (RAW, CUSTOM, STATE_SNAPSHOT, STATE_DELTA) on as they are."""


class AguiNormalizer(AguiIdentity):
    """Sans-I/O AG-UI repair: wire dicts in, legal wire dicts out (repair keys:
    :mod:`agui_codecs.protocols.agui.decoder`).

    Order repairs hold, never drop (issue 11): an upstream TOOL_CALL_END, TEXT_MESSAGE_END or
    REASONING_MESSAGE_END is *held* (not sent yet) while that item's phase goes on, so
    arguments or content arriving after it (pydantic-ai sends a call's TOOL_CALL_ARGS after
    its END when parallel calls' deltas interleave) join the item in order
    (``late-tool-args-held``, ``late-content-held``). A held END is sent before the first event
    outside its phase: for a tool call anything but TOOL_CALL_START / ARGS / END / CHUNK, the
    RESULT of another call and the lane-keeping events of
    :data:`~agui_codecs.core.chunks.KEEP_LANES` (RAW, ACTIVITY_*, REASONING_ENCRYPTED_VALUE,
    SUBAGENT_STARTED); for a text (reasoning) message anything but
    TEXT_MESSAGE_* (REASONING_MESSAGE_*) and those; also before the call's own
    TOOL_CALL_RESULT, an opener reusing its id, the terminal, and at the latest
    :data:`HOLD_EVENTS` upstream events after it arrived. Past the hold, text content opens a
    new message (``text-reopened``) and tool arguments raise
    :class:`~agui_codecs.errors.MalformedUpstreamError` (the client cannot re-open a call).
    A TOOL_CALL_RESULT arriving while its call's arguments still stream (before the call's
    END) is held and sent right after that END (``tool-result-held``), at most
    :data:`HOLD_RESULT_BYTES` in all (one more: MalformedUpstreamError). Holding costs one
    event per open item; the terminal, or a typed error, sends everything held first.

    Nothing is dropped for being out of place (issue 11): TOOL_CALL_ARGS for a call not opened
    yet (and a TOOL_CALL_CHUNK with a ``delta`` that cannot open its call: no name or no id)
    are held (``stray-tool-args-held``) and sent right after that call's TOOL_CALL_START, at
    most :data:`HOLD_STRAY_BYTES` of deltas. A run whose upstream finishes while some are still
    held (their START never came) ends with RUN_ERROR ``UPSTREAM_MALFORMED`` instead of
    RUN_FINISHED, after closing what is open. An event the verifier still refuses after the
    repairs (e.g. a SUBAGENT_STARTED reusing an id or naming an unknown parent) ends the run
    with RUN_ERROR ``UPSTREAM_PROTOCOL_ERROR`` ``"agui/verify/<fault>: ..."`` (what is open
    closed first; ``metadata`` ``{rule, eventType, ids}`` as the store guard's,
    :mod:`agui_codecs.core.guard`). Whatever a run ends without sending (the held deltas, the
    refused event, the upstream's own RUN_FINISHED) is in the terminal event's
    ``metadata.unsent`` (wire events, in arrival order), so the data survives in a typed error.

    Args:
        thread_id / run_id: the gateway's ids; when given, RUN_STARTED and RUN_FINISHED carry
            them (``run-id-mismatch`` counts an upstream that echoed others).

    Attributes:
        repairs: repair key -> count.
        verifier: the :class:`~agui_codecs.transitions.AguiVerifier` every output passed.
        ids: the thread's entity ids (:class:`~agui_codecs.identity.Identities`; the decoder's
            ``run.reserve`` adds the history's): an opener reusing one gets a derived id.

    Raises (from :meth:`push`):
        MalformedUpstreamError: an event that is not an object with a type, or whose known
            fields are malformed beyond repair; tool arguments after the call's END was sent;
            held results past :data:`HOLD_RESULT_BYTES`; held stray arguments past
            :data:`HOLD_STRAY_BYTES` or at RUN_FINISHED.
        RemoteProtocolError: (``UPSTREAM_PROTOCOL_ERROR``) an event the verifier refuses
            after the repairs.

    On any of these, :attr:`stranded` holds the events :meth:`push` let through before the
    error (the caller sends them before its RUN_ERROR; the verifier counted them as sent).
    """

    # -- public ------------------------------------------------------------------------------
    def push(self, raw: Any) -> list[Wire]:
        """Normalize one upstream event; return the events to emit (possibly none)."""
        if self.ended:
            return []
        event = self._clean(raw)
        if event is None:
            return []
        self._count += 1
        out: list[Wire] = []
        self._log, self._kept = [], False
        try:
            if not self.started and event["type"] != "RUN_STARTED":
                self.repairs["run-started-synthesized"] += 1
                out += self._emit(
                    {
                        "type": "RUN_STARTED",
                        "threadId": self.thread_id or "thread_agui",
                        "runId": self.run_id or "run_agui",
                    }
                )
            return out + self._sequence(event)
        except Exception:
            self.stranded = list(self._log)
            if not self._kept:  # the event that ended the run goes with its RUN_ERROR
                self.unsent.append(event)
            raise

    fast_plain: bool = True
    """Let the decoder offer each upstream event to :meth:`push_plain` first (same events)."""

    def push_plain(self, raw: Any) -> Event | None:
        """:meth:`push` of the commonest upstream events, those that pass on as they came,
        given as their event.

        Taken: a ``TEXT_MESSAGE_CONTENT`` / ``REASONING_MESSAGE_CONTENT`` / ``TOOL_CALL_ARGS``
        for an item open under its id (no derived id; for a call, no END held for want of
        arguments), or a ``RAW`` / ``CUSTOM`` / ``STATE_SNAPSHOT`` / ``STATE_DELTA``: an
        object whose keys are its class's wire names (no ``null``, no ``subagentRunId``) or
        unknown ones (dropped: ``unknown-field-dropped``), valid for its class, while the run
        is active and nothing is held or chunk-expanded (no held END, no chunk lane). For such
        an event :meth:`push` only cleans and validates it and passes it through the verifier,
        which reads the state and finds nothing.

        Returns:
            the event, having made the changes :meth:`push` makes (the count of events, the
            repairs, the call's "got arguments", the ids used); or None, having changed
            nothing (then :meth:`push` it: any other event, and an invalid one, whose error
            :meth:`push` reports). ``tests/codecs/test_agui_plain_fast_path.py`` checks the
            decoder's events, repairs and error are the same either way (hypothesis).
        """
        if type(raw) is not dict:
            return None
        etype = raw.get("type")
        spec = _PLAIN.get(etype) if type(etype) is str else None
        if (
            spec is None
            or self.ended
            or not self.started
            or self._ended
            or self._chunks.lanes
            or self.verifier.phase is not Phase.ACTIVE
        ):
            return None
        kind, id_field, keys, names, validate = spec
        extra = raw.keys() - keys
        if extra:  # unknown fields are dropped (counted); a field under another name is not
            if not extra.isdisjoint(names):
                return None
            raw = {key: value for key, value in raw.items() if key not in extra}
        if None in raw.values():
            return None
        up = raw.get(id_field)
        if kind is not None and (
            type(up) is not str
            or up not in self.verifier.open[kind]
            or self._alias.get((kind, up), up) != up
            or (kind == "tool-call" and (up in self._held or up not in self._args))
        ):
            return None
        try:
            event = validate(raw)
        except ValidationError:
            return None  # push reports it
        if extra:
            self.repairs["unknown-field-dropped"] += len(extra)
        self._count += 1
        if kind is not None:
            if kind == "tool-call":
                self._args[up] = self._args[up] or bool(raw["delta"])
            self._used.add(up)
        self._last_valid = None  # as push leaves it: its event given out
        return event

    def close_open(self, *, incomplete: bool = False) -> list[Wire]:
        """Close everything open (held ENDs are sent, then held results), innermost kinds
        first.

        Args:
            incomplete: the run was cut (EOF, malformed input): a TOOL_CALL_END this closes
                for a call the upstream never ended carries ``metadata.incomplete: true``
                (the RunBuilder convention); an END the upstream sent and this held goes out
                as it came, since that call's arguments were complete.
        """
        out: list[Wire] = []
        for kind, eid in list(self._ended):
            out += self._send_end(kind, eid)
        for cid in list(self._held):
            out += self._flush_held(cid, None)
        for kind in ("tool-call", "text-message", "reasoning-message", "reasoning-span"):
            for eid in self.verifier.open_ids(kind):
                self.repairs["closed-before-terminal"] += 1
                key = "toolCallId" if kind == "tool-call" else "messageId"
                end: Wire = {"type": _END[kind], key: eid}
                if incomplete and kind == "tool-call":
                    end["metadata"] = {"incomplete": True}
                out += self._emit(end)
            if kind == "tool-call":
                for cid in list(self._results):
                    out += self._send_results(cid)
        for owner_name in list(self.verifier.open["step"]):
            owner, name = owner_name.split("\x00", 1)
            self.repairs["closed-before-terminal"] += 1
            step: Wire = {"type": "STEP_FINISHED", "stepName": name}
            if owner:
                step["subagentRunId"] = owner[1:]
            out += self._emit(step)
        for sid in list(self.verifier.open["subagent"]):
            self.repairs["closed-before-terminal"] += 1
            out += self._emit({"type": "SUBAGENT_FINISHED", "subagentRunId": sid})
        self._chunks.lanes.clear()
        return out

    def terminal_metadata(self, event: Wire | None = None) -> dict[str, Any]:
        """``metadata`` for the terminal event: the upstream's, plus repairs and conventions."""
        meta = dict((event or {}).get("metadata") or {})
        meta.setdefault("provider", "agui")
        if self.violation is not None:
            meta.update(self.violation)
        unsent = self._stray.events() + self.unsent  # what ended the run came last
        if unsent:
            meta["unsent"] = unsent
        if event is not None and event["type"] == "RUN_FINISHED":
            outcome = event.get("outcome") or {}
            reason = (
                "other"
                if outcome.get("type") == "interrupt"
                else "tool-calls"
                if self._pending_calls
                else "stop"
            )
            meta.setdefault("finishReason", reason)
        if self.repairs:
            meta["repairs"] = dict(sorted(self.repairs.items()))
        return meta

    def unsent_note(self) -> str:
        """What a RUN_ERROR the decoder makes adds to its message: the calls whose held
        arguments it carries in ``metadata.unsent`` (``""`` when there are none)."""
        if not self._stray:
            return ""
        return (
            f"; TOOL_CALL_ARGS held for tool calls never opened: {self._stray.summary()} "
            "(the events are in metadata.unsent)"
        )

    def _fresh(self, base: str) -> str:
        """A new id ``<base>-<n>`` that no emitted entity has used."""
        while True:
            self._seq[base] += 1
            candidate = f"{base}-{self._seq[base]}"
            if candidate not in self._used and not self.ids.is_used(candidate):
                return candidate

    def _mint(self, what: str) -> str:
        return self._fresh(f"{self.run_id or 'run_agui'}-{what}")

    # -- sequencing ----------------------------------------------------------------------------
    def _sequence(self, ev: Wire) -> list[Wire]:
        etype = ev["type"]
        if etype in ("TOOL_CALL_RESULT", "REASONING_ENCRYPTED_VALUE"):
            ev = self._references(ev)
        if etype == "TOOL_CALL_RESULT" and self._streaming(ev["toolCallId"]):
            return self._hold_result(ev)
        if etype in CHUNKS:
            out = self._release(ev)
            for generated in self._expand(ev):
                out += self._from_chunk(generated)
            return out
        out = []
        for generated in self._chunks.expand(ev):  # the ENDs of the lanes ``ev`` closes, ``ev``
            if generated is not ev:
                out += self._from_chunk(generated)
        out += self._release(ev)
        if etype == "RUN_STARTED":
            if self.started:
                self.repairs["run-started-dropped"] += 1
                return out
            return out + self._emit(self._run_ids(ev))
        if etype in AGUI_TERMINAL:
            out += self.close_open()
            if etype == "RUN_FINISHED":
                if self._stray:
                    self._kept = True
                    self.unsent.append(ev)
                    raise MalformedUpstreamError(
                        "RUN_FINISHED while TOOL_CALL_ARGS are held for tool calls never "
                        "opened by TOOL_CALL_START"
                    )
                ev = self._run_ids(ev)
            return out + self._emit({**ev, "metadata": self.terminal_metadata(ev)})
        if etype == "TOOL_CALL_RESULT":
            cid = ev["toolCallId"]
            self._pending_calls.pop(cid, None)
            if cid in self._held:
                out += self._flush_held(cid, _args_in(ev.get("rawEvent"), cid) or _args_in(ev, cid))
            return out + self._emit(ev)
        if etype in ("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"):
            return out + self._emit(self._activity(ev))
        if etype == "MESSAGES_SNAPSHOT":
            ev = self._snapshot(ev)
            for message in ev.get("messages") or []:
                if isinstance(message, dict) and message.get("role") == "tool":
                    self._pending_calls.pop(str(message.get("toolCallId")), None)
            for cid in list(self._held):
                out += self._flush_held(cid, _args_in(ev.get("messages"), cid))
            return out + self._emit(ev)
        entry = LIFECYCLE_BY_EVENT.get(etype)
        if entry is None or entry[0].kind in ("step", "subagent"):
            return out + self._guard_step(ev)
        lc, role = entry
        return out + self._bracket(lc.kind, lc.id_field, role, ev)

    def _guard_step(self, ev: Wire) -> list[Wire]:
        entry = LIFECYCLE_BY_EVENT.get(ev["type"])
        if entry is None:
            return self._emit(ev)
        lc, role = entry
        if lc.kind == "step":
            key = ("" if "subagentRunId" not in ev else "@" + ev["subagentRunId"]) + "\x00"
            is_open = key + ev["stepName"] in self.verifier.open["step"]
        else:
            is_open = ev.get("subagentRunId") in self.verifier.open["subagent"]
        if role == "open" and is_open:
            self.repairs["duplicate-start-dropped"] += 1
            return []
        if role == "close" and not is_open:
            self.repairs["orphan-end-dropped"] += 1
            return []
        return self._emit(ev)

    def _bracket(
        self, kind: str, id_field: str, role: str, ev: Wire, *, upstream: bool = True
    ) -> list[Wire]:
        up: str = ev[id_field]
        eid: str = self._alias.get((kind, up), up)
        is_open = eid in self.verifier.open[kind] or (kind == "tool-call" and eid in self._held)
        if role == "open" and not is_open:
            eid = self._entity_id(kind, up)
        ev = {**ev, id_field: eid}
        if role == "open":
            if is_open:
                self.repairs["duplicate-start-dropped"] += 1
                return []
            if kind == "text-message":
                ev.setdefault("role", "assistant")
            elif kind == "reasoning-message":
                ev["role"] = "reasoning"
            if kind == "tool-call":
                self._args[eid], self._starts[eid] = False, ev
                self._pending_calls[eid] = None
                if isinstance(parent := ev.get("parentMessageId"), str):
                    ev["parentMessageId"] = self._alias.get(("text-message", parent), parent)
                opened = self._emit(ev)
                for held in self._stray.release(up):
                    opened += self._bracket(kind, id_field, "continue", held)
                return opened
            return self._emit(ev)
        if role == "continue":
            if kind == "tool-call":
                if not is_open:
                    if (kind, eid) in self._closed:
                        raise MalformedUpstreamError(
                            f"TOOL_CALL_ARGS for {eid!r} after its TOOL_CALL_END was sent "
                            "(the hold of a call's END ended)"
                        )
                    return self._hold_stray(ev)
                if eid in self._held:  # the END of a call without ARGS: hold it as late args
                    self._hold_end(kind, eid, self._held.pop(eid), upstream=True)
                if self._late(kind, eid):
                    self.repairs["late-tool-args-held"] += 1
                self._args[eid] = self._args[eid] or bool(ev["delta"])
                return self._emit(ev)
            if is_open:
                if self._late(kind, eid):
                    self.repairs["late-content-held"] += 1
                return self._emit(ev)
            return self._reopen(kind, id_field, up, ev)
        if not is_open or eid in self._held or (kind, eid) in self._ended:
            self.repairs["orphan-end-dropped"] += 1
            return []
        if kind not in _PHASE:
            return self._emit(ev)
        if (
            kind == "tool-call"
            and not self._args.get(eid)
            and eid not in self._results
            and self._carried_args(eid, ev) is None
        ):
            self._held[eid] = ev  # no arguments yet: wait for a result or snapshot carrying them
            return []
        self._hold_end(kind, eid, ev, upstream=upstream)
        return []

    def _reopen(self, kind: str, id_field: str, up: str, ev: Wire) -> list[Wire]:
        """CONTENT for a message that is not open: open one (:meth:`_entity_id`: a derived id
        when the old one closed)."""
        if (kind, ev[id_field]) in self._closed:
            self.repairs["text-reopened"] += 1
        else:
            self.repairs["text-start-synthesized"] += 1
        eid = self._entity_id(kind, up)
        start: Wire = {
            "type": "TEXT_MESSAGE_START" if kind == "text-message" else "REASONING_MESSAGE_START",
            id_field: eid,
        }
        start["role"] = "assistant" if kind == "text-message" else "reasoning"
        return self._emit(start) + self._emit({**ev, id_field: eid})

    def _run_ids(self, ev: Wire) -> Wire:
        ids = {"threadId": self.thread_id, "runId": self.run_id}
        for key, mine in ids.items():
            if mine is not None and ev.get(key) != mine:
                self.repairs["run-id-mismatch"] += 1
                ev = {**ev, key: mine}
        if ev["type"] == "RUN_STARTED":
            ev.setdefault("protocolVersion", "1.0")
        return ev

    # -- chunks ---------------------------------------------------------------------------------
    def _adopt(self, chunk_kind: str, entity: str) -> Wire | None:
        """:class:`ChunkExpander` hook: a chunk naming an item that is open here (a non-chunk
        START opened it, or its END is held) continues it rather than opening another."""
        kind = _LIFECYCLE_KIND[chunk_kind]
        return {} if self._alias.get((kind, entity), entity) in self.verifier.open[kind] else None

    def _expand(self, ev: Wire) -> list[Wire]:
        """Expand a ``*_CHUNK`` with the client's :class:`ChunkExpander`, repairing what the
        client rejects (:meth:`_repair_chunk`); interleaved parallel chunk streams stay apart
        (the END of a stream another chunk replaced is held and the stream adopted again)."""
        spec = CHUNKS[ev["type"]]
        kind = _LIFECYCLE_KIND[spec.kind]
        if ev.get(spec.id_field) == "":
            ev = {k: v for k, v in ev.items() if k != spec.id_field}
        eid = ev.get(spec.id_field)
        if isinstance(eid, str):
            eid = self._alias.get((kind, eid), eid)
        if (
            kind == "tool-call"
            and isinstance(eid, str)
            and not ev.get("toolCallName")  # a named chunk opens a new call (identity)
            and (kind, eid) in self._closed
            and eid not in self.verifier.open[kind]
        ):
            if ev.get("delta"):
                raise MalformedUpstreamError(
                    f"TOOL_CALL_CHUNK for {eid!r} after its TOOL_CALL_END was sent "
                    "(the hold of a call's END ended)"
                )
            self.repairs["chunk-dropped"] += 1
            return []
        closed: list[Wire] = []
        for _ in range(6):
            try:
                out = self._chunks.expand(ev)
            except ChunkError as exc:
                closed += exc.closed
                repaired = self._repair_chunk(ev, spec, exc)
                if repaired is None:
                    break
                ev = repaired
                continue
            self.repairs["chunk-expanded"] += 1
            return closed + out
        if spec.kind == "tool" and isinstance(ev.get("delta"), str) and ev["delta"]:
            # arguments of a call that cannot be opened (yet): held like stray TOOL_CALL_ARGS
            return closed + self._hold_stray(
                {
                    "type": "TOOL_CALL_ARGS",
                    "toolCallId": ev.get(spec.id_field),
                    "delta": ev["delta"],
                }
            )
        self.repairs["chunk-dropped"] += 1
        return closed

    def _repair_chunk(self, ev: Wire, spec: ChunkSpec, exc: ChunkError) -> Wire | None:
        """The chunk retried after :class:`ChunkError` ``exc``, or None to drop it: a first
        text / reasoning chunk without an id gets a minted one, a disagreeing opener field or
        subagent tag is dropped (``subagent-tag-dropped``), an id-less chunk among several
        lanes continues the newest; a tool chunk that can open nothing (no id, no name) is
        dropped (``chunk-dropped``)."""
        if exc.rule == "first-chunk-without-id" and spec.kind != "tool":
            return {**ev, spec.id_field: self._mint(_LIFECYCLE_KIND[spec.kind])}
        if exc.rule == "field-disagrees-with-opener":
            return {k: v for k, v in ev.items() if k not in spec.agree}
        if exc.rule == "subagent-mismatch":
            self.repairs["subagent-tag-dropped"] += 1
            return {k: v for k, v in ev.items() if k != "subagentRunId"}
        if exc.rule == "ambiguous-continuation":
            lanes = [lane for lane in self._chunks.lanes.values() if lane.kind == spec.kind]
            return {**ev, spec.id_field: lanes[-1].entity}
        return None

    def _from_chunk(self, ev: Wire) -> list[Wire]:
        """Sequence one event :class:`ChunkExpander` made (opener, content or lane END)."""
        lc, role = LIFECYCLE_BY_EVENT[ev["type"]]
        kind, id_field = lc.kind, lc.id_field
        up: str = ev[id_field]
        eid = self._alias.get((kind, up), up)
        if role == "open" and (kind, eid) in self._closed and eid not in self.verifier.open[kind]:
            self.repairs["text-reopened"] += 1  # the chunk stream resumes: a new entity
        elif role == "continue" and not ev.get("delta"):
            return []
        elif role == "close" and ((kind, eid) in self._ended or eid in self._held):
            return []  # the item's END is held already
        return self._bracket(kind, id_field, role, ev, upstream=False)
