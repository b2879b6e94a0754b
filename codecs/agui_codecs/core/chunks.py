"""Chunk expansion: ``*_CHUNK`` events into START/CONTENT/END, the way the client does it.

Source: ``@ag-ui/client`` 1.0.0 ``src/chunks/transform.ts`` (``transformChunks``), the stage
between schema enforcement and ``verifyEvents`` (``docs/protocols.md`` §2.3). One pending
chunk stream (a *lane*) per subagent: the parent agent's lane is keyed ``None``, a subagent's
by its ``subagentRunId``.

* A chunk opens its item when its lane holds no stream of that item (closing the lane's other
  stream first), else continues it; a chunk without an id continues the open stream of its
  kind (its own lane, the parent's, or the only lane of that kind).
* The opener carries ``toolCallName`` / ``parentMessageId`` / ``name`` / ``subagentRunId`` /
  ``metadata`` of the first chunk, ``role`` ``"assistant"`` for text (unless given) and
  ``"reasoning"`` for reasoning; a later chunk whose ``role`` / ``name`` / ``toolCallName`` /
  ``parentMessageId`` disagrees with the opener is an error.
* Lanes close with END events: their own lane on the non-chunk events of
  :data:`CLOSE_OWN_LANE`, every lane on :data:`CLOSE_ALL_LANES`, a subagent's lane on its
  SUBAGENT_FINISHED / SUBAGENT_ERROR. Other events (RAW, ACTIVITY_*, REASONING_ENCRYPTED_VALUE,
  SUBAGENT_STARTED) leave the lanes open.

Used by the conformance kit (which reports :class:`ChunkError` as a rule violation), by
:class:`agui_codecs.core.RunFold` and by the ``agui`` decoder's repair
(:mod:`agui_codecs.protocols.agui`), which repairs the :class:`ChunkError` cases on top and
passes an ``adopt`` hook (an item it still holds open continues instead of re-opening).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CHUNKS",
    "CHUNK_TYPES",
    "CLOSE_ALL_LANES",
    "CLOSE_OWN_LANE",
    "CLOSE_SUBAGENT_LANE",
    "KEEP_LANES",
    "ChunkError",
    "ChunkExpander",
    "ChunkSpec",
    "Lane",
]

Wire = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ChunkSpec:
    """One chunk type: the item ``kind`` (``text``, ``tool``, ``reasoning``), its id field and
    the START / CONTENT / END types it expands into, and the opener fields a later chunk must
    agree with."""

    kind: str
    id_field: str
    start: str
    content: str
    end: str
    agree: tuple[str, ...]


CHUNKS: Final[dict[str, ChunkSpec]] = {
    "TEXT_MESSAGE_CHUNK": ChunkSpec(
        "text",
        "messageId",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        ("role", "name"),
    ),
    "TOOL_CALL_CHUNK": ChunkSpec(
        "tool",
        "toolCallId",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        ("toolCallName", "parentMessageId"),
    ),
    "REASONING_MESSAGE_CHUNK": ChunkSpec(
        "reasoning",
        "messageId",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        (),
    ),
}
"""Chunk type -> :class:`ChunkSpec` (transform.ts)."""

CHUNK_TYPES: Final = frozenset(CHUNKS)
"""The shorthand event types the client expands."""

_BY_KIND: Final = {spec.kind: spec for spec in CHUNKS.values()}

CLOSE_OWN_LANE: Final = frozenset(
    {
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "CUSTOM",
        "STEP_STARTED",
        "STEP_FINISHED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    }
)
"""Non-chunk events that close the pending stream of their own lane (their subagent's)."""

CLOSE_ALL_LANES: Final = frozenset(
    {"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"}
)
"""Events that close every lane."""

CLOSE_SUBAGENT_LANE: Final = frozenset({"SUBAGENT_FINISHED", "SUBAGENT_ERROR"})
"""Events that close the lane of the subagent they end."""

KEEP_LANES: Final = frozenset(
    {"RAW", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "REASONING_ENCRYPTED_VALUE", "SUBAGENT_STARTED"}
)
"""Non-chunk events that leave every lane open. With :data:`CHUNK_TYPES`,
:data:`CLOSE_OWN_LANE`, :data:`CLOSE_ALL_LANES` and :data:`CLOSE_SUBAGENT_LANE` these cover
every AG-UI event type exactly once (``tests/codecs/test_core.py``)."""

_KEPT: Final = ("toolCallName", "parentMessageId", "name", "subagentRunId")


class ChunkError(Exception):
    """A chunk the client rejects (``runAgent`` fails).

    Attributes:
        rule: the kit's rule suffix (``agui/chunks/<rule>``): ``subagent-mismatch``,
            ``ambiguous-continuation``, ``field-disagrees-with-opener``,
            ``first-chunk-without-id``, ``first-tool-chunk-without-name``.
        message: one line.
        ids: the ids involved.
        closed: the END events of the lane the chunk would have replaced, closed before the
            error (as in transform.ts); a repairing caller sends them.
    """

    def __init__(self, rule: str, message: str, ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.rule, self.message, self.ids = rule, message, ids
        self.closed: list[Wire] = []


@dataclass(slots=True)
class Lane:
    """The pending chunk stream of one lane: item ``kind``, its id and the opener's fields."""

    kind: str
    entity: str
    fields: Wire


class ChunkExpander:
    """``transformChunks`` over AG-UI wire dicts (see the module docstring).

    Args:
        adopt: ``(kind, entity) -> opener fields or None``, asked before a chunk opens a lane
            for ``entity``: fields (possibly empty) mean the caller already has that item open
            (opened by a non-chunk START, or its END held), so the lane takes it over with no
            opener and the chunk continues it. The client has no such hook: the kit and
            :class:`~agui_codecs.core.RunFold` pass none.

    Attributes:
        lanes: lane key (``None`` or a subagentRunId) -> its pending :class:`Lane`.
        resumed: set by :meth:`expand` to the id of an item a chunk re-opened after another
            chunk stream had closed it (the client opens a second item with that id), else None.
    """

    def __init__(self, *, adopt: Callable[[str, str], Wire | None] | None = None) -> None:
        self.lanes: dict[str | None, Lane] = {}
        self.resumed: str | None = None
        self._closed_by_chunk: set[tuple[str, str]] = set()
        self._adopt = adopt

    def expand(self, ev: Wire) -> list[Wire]:
        """The events the client's reducer gets for ``ev`` (END events closing lanes first).

        Raises:
            ChunkError: a chunk the client rejects (the client's run ends there; a lane the
                chunk would have replaced is closed, as in transform.ts).
        """
        self.resumed = None
        etype = ev["type"]
        if etype in CLOSE_OWN_LANE:
            return [*self.close_lane(ev.get("subagentRunId")), ev]
        if etype in CLOSE_ALL_LANES:
            return [*self.close_all(), ev]
        if etype in CLOSE_SUBAGENT_LANE and ev.get("subagentRunId") is not None:
            return [*self.close_lane(ev["subagentRunId"]), ev]
        spec = CHUNKS.get(etype)
        if spec is None:
            return [ev]
        kind, id_field = spec.kind, spec.id_field
        entity, tag = ev.get(id_field), ev.get("subagentRunId")
        lane_key = self._resolve(kind, entity, tag, etype)
        lane = self.lanes.get(lane_key)
        result: list[Wire] = []
        if lane is not None and lane.kind == kind and entity in (None, lane.entity):
            for field in spec.agree:
                established = lane.fields.get(field)
                if field in ev and ev[field] != established:
                    raise ChunkError(
                        "field-disagrees-with-opener",
                        f"{etype}: {field} {ev[field]!r} differs from the opener's {established!r}",
                        (lane.entity,),
                    )
        else:
            result += self.close_lane(lane_key, by_chunk=True)
            lane = self._open(ev, spec, lane_key, result)
        if "delta" in ev or "rawEvent" in ev or (not result and "metadata" in ev):
            body: Wire = {"type": spec.content, id_field: lane.entity, "delta": ev.get("delta", "")}
            owner = tag if tag is not None else lane.fields.get("subagentRunId")
            if owner is not None:
                body["subagentRunId"] = owner
            result.append(body)
        return result

    def _open(self, ev: Wire, spec: ChunkSpec, lane_key: str | None, result: list[Wire]) -> Lane:
        """The lane a chunk opens (its opener appended to ``result``), or the item the
        ``adopt`` hook hands over (no opener).

        Raises:
            ChunkError: no id, or a first tool chunk without a name; its ``closed`` holds
                ``result`` (the replaced lane's END).
        """
        kind, id_field = spec.kind, spec.id_field
        entity: Any = ev.get(id_field)
        adopted = None if entity is None or self._adopt is None else self._adopt(kind, entity)
        if adopted is not None:
            lane = self.lanes[lane_key] = Lane(kind, entity, adopted)
            return lane
        error: ChunkError | None = None
        if entity is None:
            error = ChunkError(
                "first-chunk-without-id", f"first {ev['type']} of a stream has no {id_field}"
            )
        elif kind == "tool" and "toolCallName" not in ev:
            error = ChunkError(
                "first-tool-chunk-without-name",
                "first TOOL_CALL_CHUNK has no toolCallName",
                (entity,),
            )
        if error is not None:
            error.closed = result
            raise error
        if (kind, entity) in self._closed_by_chunk:
            self.resumed = entity
        fields: Wire = {k: ev[k] for k in _KEPT if k in ev}
        if kind == "text":
            fields["role"] = ev.get("role", "assistant")
        if kind == "reasoning":
            fields["role"] = "reasoning"
        lane = self.lanes[lane_key] = Lane(kind, entity, fields)
        opener: Wire = {"type": spec.start, id_field: entity, **fields}
        if "metadata" in ev:
            opener["metadata"] = ev["metadata"]
        result.append(opener)
        return lane

    def close_lane(self, owner: str | None, *, by_chunk: bool = False) -> list[Wire]:
        """The END event closing lane ``owner``'s pending stream (none when it has none)."""
        lane = self.lanes.pop(owner, None)
        if lane is None:
            return []
        if by_chunk:
            self._closed_by_chunk.add((lane.kind, lane.entity))
        spec = _BY_KIND[lane.kind]
        event: Wire = {"type": spec.end, spec.id_field: lane.entity}
        if lane.fields.get("subagentRunId") is not None:
            event["subagentRunId"] = lane.fields["subagentRunId"]
        return [event]

    def close_all(self) -> list[Wire]:
        """END events closing every lane, oldest lane first."""
        return [e for owner in list(self.lanes) for e in self.close_lane(owner)]

    def _resolve(self, kind: str, entity: Any, tag: Any, what: str) -> str | None:
        if entity is not None:
            for owner, lane in self.lanes.items():
                if lane.kind == kind and lane.entity == entity:
                    if tag is not None and tag != owner:
                        raise ChunkError(
                            "subagent-mismatch",
                            f"{what} {entity!r}: chunk subagentRunId {tag!r} does not "
                            "match its open stream",
                            (entity,),
                        )
                    return owner
            return tag  # type: ignore[no-any-return]
        if tag is not None:
            return tag  # type: ignore[no-any-return]
        parent = self.lanes.get(None)
        if parent is not None and parent.kind == kind:
            return None
        candidates = [o for o, lane in self.lanes.items() if lane.kind == kind]
        if len(candidates) > 1:
            raise ChunkError(
                "ambiguous-continuation",
                f"{what} chunk without an id while {len(candidates)} lanes are open",
            )
        return candidates[0] if candidates else None
