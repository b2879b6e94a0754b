"""Holding and the guard of :class:`~agui_codecs.protocols.agui._normalizer.AguiNormalizer`:
the state of one normalized run, the verifier every output passes (:meth:`AguiHolds._emit`), and
the holds (an END held while late content may come, a result held while its call's arguments
stream, stray arguments held until their call opens; the rules are in ``AguiNormalizer``'s
docstring).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Final

import orjson

from ...core.chunks import KEEP_LANES, ChunkExpander
from ...errors import MalformedUpstreamError, RemoteProtocolError
from ...identity import Identities
from ...transitions import AGUI_TERMINAL, AguiVerifier, Fault
from ._carried import args_in as _args_in
from ._cleaning import AguiCleaner
from ._stray import StrayArgs

__all__ = ["HOLD_EVENTS", "HOLD_RESULT_BYTES", "AguiHolds", "Wire"]

Wire = dict[str, Any]

_END = {
    "text-message": "TEXT_MESSAGE_END",
    "tool-call": "TOOL_CALL_END",
    "reasoning-message": "REASONING_MESSAGE_END",
    "reasoning-span": "REASONING_END",
}
_KIND_OF_END = {end: kind for kind, end in _END.items() if kind != "reasoning-span"}
_START_OF = {
    "text-message": "TEXT_MESSAGE_START",
    "tool-call": "TOOL_CALL_START",
    "reasoning-message": "REASONING_MESSAGE_START",
}
_CHUNK_OF = {"text-message": "TEXT_MESSAGE_CHUNK", "reasoning-message": "REASONING_MESSAGE_CHUNK"}
"""A text or reasoning ``*_CHUNK`` naming an item whose END the upstream sent opens a new
message (the chunk's own rule, AG-UI 1.0 "Chunk events": a chunk whose id has no open
message starts one), so it ends that END's hold like an opener reusing the id; the END of a
chunk lane another chunk replaced (not the upstream's) keeps its hold and is adopted again."""

_PHASE: dict[str, frozenset[str]] = {  # held END of this kind -> events that keep it held
    "tool-call": frozenset(
        {
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_CHUNK",
            "TOOL_CALL_RESULT",
        }
    )
    | KEEP_LANES,
    "text-message": frozenset(
        {"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK"}
    )
    | KEEP_LANES,
    "reasoning-message": frozenset(
        {
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
            "REASONING_MESSAGE_CHUNK",
        }
    )
    | KEEP_LANES,
}

_ENTITY_KEY = {  # an event that opens an entity of the thread -> its id field
    "TEXT_MESSAGE_START": "messageId",
    "REASONING_MESSAGE_START": "messageId",
    "REASONING_START": "messageId",
    "TOOL_CALL_START": "toolCallId",
    "TOOL_CALL_RESULT": "messageId",
    "ACTIVITY_SNAPSHOT": "messageId",
}

HOLD_EVENTS: Final = 4096
"""A held END (see :class:`AguiNormalizer`) is sent at the latest this many upstream events
after it arrived."""

HOLD_RESULT_BYTES: Final = 1 << 20
"""Bytes (compact JSON) of TOOL_CALL_RESULT events held while their calls' arguments stream;
one more is :class:`~agui_codecs.errors.MalformedUpstreamError` (``UPSTREAM_MALFORMED``)."""


class AguiHolds(AguiCleaner):
    """The state, holds and guard of one normalized run (a base of
    :class:`~agui_codecs.protocols.agui._normalizer.AguiNormalizer`, which documents the
    rules and the args)."""

    def __init__(self, *, thread_id: str | None = None, run_id: str | None = None) -> None:
        self.thread_id, self.run_id = thread_id, run_id
        self.repairs: Counter[str] = Counter()
        self.verifier = AguiVerifier()
        self.started = False
        self.ended = False
        self._alias: dict[tuple[str, str], str] = {}  # (kind, upstream id) -> output id
        # (kind, upstream id) -> output ids of this run's entities with it, in order (kinds:
        # the lifecycle kinds, "activity", "result"); a MESSAGES_SNAPSHOT names them
        self._entities: dict[tuple[str, str], list[str]] = {}
        self._upstreams: set[str] = set()  # upstream ids of this run's entities
        self._span_messages: set[str] = set()  # reasoning spans whose id a message took
        self.history_activities: set[str] = set()  # ids of the history's activity messages
        self.history_ids: dict[str, list[str]] = {}  # provider id -> the history's ids of it
        self._closed: set[tuple[str, str]] = set()
        self._seq: Counter[str] = Counter()
        self._chunks = ChunkExpander(adopt=self._adopt)
        self._args: dict[str, bool] = {}  # open call -> got ARGS
        self._held: dict[str, Wire] = {}  # call id -> END of a call without ARGS, held
        # until a result or snapshot carries its arguments
        # (kind, id) -> (held END, upstream event count when held, whether the upstream sent it)
        self._ended: dict[tuple[str, str], tuple[Wire, int, bool]] = {}
        self._ended_kinds: Counter[str] = Counter()  # kind -> held ENDs of it (_hold_end)
        self._results: dict[str, list[Wire]] = {}  # open call -> results held until its END
        self._result_bytes = 0
        self._count = 0  # upstream events pushed
        self._starts: dict[str, Wire] = {}
        self._pending_calls: dict[str, None] = {}
        self._thinking: dict[str, str | None] = {"span": None, "message": None}
        self._used: set[str] = set()  # every id an emitted event carried (minted ids avoid them)
        # entity ids of the thread: reserved history, then every message, reasoning message,
        # tool call and result message opened (agui_codecs.identity; AguiNormalizer._entity_id)
        self.ids = Identities()
        self._stray = StrayArgs()  # ARGS of calls not opened yet
        self._log: list[Wire] = []  # what _emit let through during the current push
        self._kept = False  # the current push's event is held (stray) or in unsent
        self.stranded: list[Wire] = []
        self.unsent: list[Wire] = []  # events the run ends without sending (metadata.unsent)
        self.violation: dict[str, Any] | None = None  # rule/eventType/ids of a refused event

    def _adopt(self, chunk_kind: str, entity: str) -> Wire | None:
        """The :class:`ChunkExpander` hook (``AguiNormalizer`` adopts what is open here)."""
        return None

    # -- holds ----------------------------------------------------------------------------------
    def _hold_end(self, kind: str, eid: str, end: Wire, *, upstream: bool) -> None:
        """Hold the END of ``(kind, eid)`` (not held yet), sent by :meth:`_release` or
        :meth:`close_open`."""
        self._ended[(kind, eid)] = (end, self._count, upstream)
        self._ended_kinds[kind] += 1

    fast_release: bool = True
    """Let :meth:`_release` find what ``ev`` sends without asking each held END
    (:meth:`_ends_holds`; same events)."""

    def _ends_holds(self, ev: Wire) -> str | None:
        """What :meth:`_release` of ``ev`` sends, found without asking each held END (a run
        whose messages follow one another holds each one's END until an event of another
        kind: asking each of them at every event made such a run quadratic): None, nothing;
        ``"expired"``, only the ENDs held :data:`HOLD_EVENTS` events ago (the first in order:
        each is held at the count of its arrival, under a key not held yet); ``"any"``, ask
        each. ``ev`` ends other holds when it is a TOOL_CALL_RESULT, lies outside the phase of
        a kind with an END held, or opens (or continues by chunk) an id whose END is held.
        ``tests/codecs/test_agui_release.py`` checks the events are those of asking each held
        END (hypothesis)."""
        etype = ev["type"]
        if etype == "TOOL_CALL_RESULT":
            return "any"
        for kind, held in self._ended_kinds.items():
            if not held:
                continue
            if etype not in _PHASE[kind]:
                return "any"
            if etype == _START_OF[kind] or etype == _CHUNK_OF.get(kind):
                up = ev.get("toolCallId" if kind == "tool-call" else "messageId")
                if isinstance(up, str) and (kind, self._alias.get((kind, up), up)) in self._ended:
                    return "any"
        _, oldest, _ = next(iter(self._ended.values()))
        return "expired" if self._count - oldest >= HOLD_EVENTS else None

    def _release(self, ev: Wire) -> list[Wire]:
        """Send the held ENDs ``ev`` ends the hold of (see the class docstring), oldest first."""
        etype, out = ev["type"], list[Wire]()
        if not self._ended:
            return out
        ends = self._ends_holds(ev) if self.fast_release else "any"
        if ends is None:
            return out
        if ends == "expired":
            while self._ended:
                (kind, eid), (_, at, _) = next(iter(self._ended.items()))
                if self._count - at < HOLD_EVENTS:
                    break
                out += self._send_end(kind, eid)
            return out
        for (kind, eid), (_, at, upstream) in list(self._ended.items()):
            id_field = "toolCallId" if kind == "tool-call" else "messageId"
            opener = etype == _START_OF[kind] or (upstream and etype == _CHUNK_OF.get(kind))
            reopens = (
                opener
                and isinstance(up := ev.get(id_field), str)
                and self._alias.get((kind, up), up) == eid
            )
            own_result = etype == "TOOL_CALL_RESULT" and ev["toolCallId"] == eid
            if (
                etype not in _PHASE[kind]
                or reopens
                or own_result
                or self._count - at >= HOLD_EVENTS
            ):
                out += self._send_end(kind, eid)
        return out

    def _send_end(self, kind: str, eid: str) -> list[Wire]:
        """Send the held END of ``(kind, eid)``: a call that got no ARGS gets one from its
        raw events or held results first (``tool-args-synthesized``), its held results
        follow."""
        end, *_ = self._ended.pop((kind, eid))
        self._ended_kinds[kind] -= 1
        if kind != "tool-call":
            return self._emit(end)
        out: list[Wire] = []
        if not self._args.get(eid) and (args := self._carried_args(eid, end)) is not None:
            self.repairs["tool-args-synthesized"] += 1
            out += self._emit({"type": "TOOL_CALL_ARGS", "toolCallId": eid, "delta": args})
        return out + self._emit(end) + self._send_results(eid)

    def _carried_args(self, eid: str, end: Wire) -> str | None:
        """Arguments of call ``eid`` in its START's or END's raw event or a held result."""
        args = _args_in(self._starts[eid].get("rawEvent"), eid) or _args_in(
            end.get("rawEvent"), eid
        )
        for result in self._results.get(eid, ()):
            args = args or _args_in(result.get("rawEvent"), eid) or _args_in(result, eid)
        return args

    def _send_results(self, cid: str) -> list[Wire]:
        out: list[Wire] = []
        for result in self._results.pop(cid, ()):
            self._result_bytes -= len(orjson.dumps(result))
            self._pending_calls.pop(cid, None)
            out += self._emit(result)
        return out

    def _streaming(self, cid: str) -> bool:
        """Whether call ``cid`` is open and its upstream END has not arrived (a chunk stream
        whose lane closed may go on)."""
        return (
            cid in self.verifier.open["tool-call"]
            and cid not in self._held
            and not self._late("tool-call", cid)
        )

    def _hold_result(self, ev: Wire) -> list[Wire]:
        """Hold a TOOL_CALL_RESULT that arrived while its call's arguments still stream."""
        size = len(orjson.dumps(ev))
        if self._result_bytes + size > HOLD_RESULT_BYTES:
            raise MalformedUpstreamError(
                f"TOOL_CALL_RESULT for {ev['toolCallId']!r} while its arguments stream: more "
                f"than {HOLD_RESULT_BYTES} bytes of results held"
            )
        self.repairs["tool-result-held"] += 1
        self._result_bytes += size
        self._results.setdefault(ev["toolCallId"], []).append(ev)
        return []

    def _late(self, kind: str, eid: str) -> bool:
        """Whether ``(kind, eid)`` has an END the upstream sent, held."""
        held = self._ended.get((kind, eid))
        return held is not None and held[2]

    def _hold_stray(self, ev: Wire) -> list[Wire]:
        """Hold TOOL_CALL_ARGS of a call not opened (yet) until its TOOL_CALL_START."""
        self.repairs["stray-tool-args-held"] += 1
        self._kept = True
        self._stray.hold(ev)
        return []

    def _flush_held(self, cid: str, args: str | None) -> list[Wire]:
        end = self._held.pop(cid)
        out: list[Wire] = []
        if args is not None:
            self.repairs["tool-args-synthesized"] += 1
            out += self._emit({"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": args})
        return out + self._emit(end)

    # -- the guard --------------------------------------------------------------------------------
    def _emit(self, ev: Wire) -> list[Wire]:
        """Pass ``ev`` through the verifier; anything it rejects is dropped and counted."""
        found = self.verifier.step(ev, apply_faulty=False)
        if found is not None and found.fault is Fault.OWNER_MISMATCH and "subagentRunId" in ev:
            if not ev["type"].startswith("SUBAGENT_"):
                untagged = {k: v for k, v in ev.items() if k != "subagentRunId"}
                if self.verifier.step(untagged, apply_faulty=False) is None:
                    self.repairs["subagent-tag-dropped"] += 1
                    ev, found = untagged, None
        if found is not None:
            rule = f"agui/verify/{found.fault.value}"
            self.violation = {"rule": rule, "eventType": ev["type"], "ids": list(found.ids)}
            raise RemoteProtocolError(f"{rule}: {found.message}")
        self._log.append(ev)
        for key in ("messageId", "toolCallId"):
            if isinstance(ev.get(key), str):
                self._used.add(ev[key])
        if (field := _ENTITY_KEY.get(ev["type"])) is not None:
            self.ids.reserve((ev[field],))  # an opener: its id is now taken in the thread
        if ev["type"] in _KIND_OF_END:
            self._closed.add(
                (_KIND_OF_END[ev["type"]], ev["messageId" if "messageId" in ev else "toolCallId"])
            )
        if ev["type"] == "RUN_STARTED":
            self.started = True
        elif ev["type"] in AGUI_TERMINAL:
            self.ended = True
        return [ev]
