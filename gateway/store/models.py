"""Value types exchanged with a :class:`~gateway.store.protocol.RunStore`.

All are frozen dataclasses; JSON payloads are plain ``dict`` / ``list`` values (AG-UI wire
dicts for events, history items for messages). Times are timezone-aware UTC ``datetime``.
The types the broker shares (``JsonObject``, ``RunEvent``, ``TERMINAL_EVENT_TYPES``) live in
the neutral :mod:`gateway.types` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from ..tenancy import public_id
from ..types import TERMINAL_EVENT_TYPES, Cursor, JsonObject, RunEvent
from .errors import CursorMismatchError

__all__ = [
    "ACTIVE_STATUSES",
    "TERMINAL_EVENT_TYPES",
    "TERMINAL_STATUSES",
    "ApiKey",
    "HistoryPage",
    "JsonObject",
    "LeaseState",
    "NewEvent",
    "OwnedRun",
    "PurgeResult",
    "RunEvent",
    "RunFinal",
    "RunMark",
    "RunRecord",
    "RunStatus",
    "StoredEvent",
    "TenantUsage",
    "ThreadSummary",
]

RunStatus = Literal["queued", "running", "completed", "failed", "cancelled", "interrupted"]
"""Lifecycle of a run: ``queued`` -> ``running`` -> one terminal status."""

ACTIVE_STATUSES: Final[frozenset[str]] = frozenset({"queued", "running"})
"""Statuses of a run that may still receive events."""

TERMINAL_STATUSES: Final[frozenset[str]] = frozenset(
    {"completed", "failed", "cancelled", "interrupted"}
)
"""Statuses of a run that ended (its terminal event is durable)."""


class StoredEvent(RunEvent):
    """A :class:`RunEvent` read back from the store.

    ``StoredEvent(cursor, event, json=None, *, durable=True, created_at=None)``.

    Attributes:
        durable: True when the event was committed before it was published (control events);
            False for deltas that were published first and written in a batch.
        created_at: when the event row was written.
    """

    __slots__ = ("created_at", "durable")

    def __init__(
        self,
        cursor: Cursor,
        event: JsonObject | None,
        json: bytes | None = None,
        *,
        durable: bool = True,
        created_at: datetime | None = None,
        type: str | None = None,
    ) -> None:
        super().__init__(cursor, event, json, type=type)
        self.durable = durable
        self.created_at = created_at

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, StoredEvent)
        return (
            super().__eq__(other) is True
            and self.durable == other.durable
            and self.created_at == other.created_at
        )

    __hash__ = None

    def __repr__(self) -> str:
        return (
            f"StoredEvent(cursor={self.cursor!r}, event={self.event!r}, "
            f"durable={self.durable!r}, created_at={self.created_at!r})"
        )


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append: the producer-assigned ``seq`` and the wire dict.

    Attributes:
        seq: per-run sequence number (the batch's seqs must continue the run's last seq).
        event: AG-UI wire dict; ``event["type"]`` is stored in its own column.
        durable: see :attr:`StoredEvent.durable`.
        json: ``orjson.dumps(event)`` when the caller has it (the writer's one serialization
            of the event): stored as is (:func:`gateway.store.sql_writes.prepare_append`)
            instead of serialized again; not part of equality.
    """

    seq: int
    event: JsonObject
    durable: bool = True
    json: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class RunFinal:
    """The terminal update written in the same transaction as the run's terminal event.

    Attributes:
        status: one of :data:`TERMINAL_STATUSES`.
        usage: the terminal event's ``usage`` (AG-UI ``TokenUsage[]`` wire list), if any.
        error: ``{"code", "message"}`` for RUN_ERROR, else None.
        model: the model that served the run, when it became known.
        messages: history items to upsert for the run's thread (by item ``id``).
    """

    status: RunStatus
    usage: Any = None
    error: JsonObject | None = None
    model: str | None = None
    messages: Sequence[JsonObject] = ()


@dataclass(frozen=True, slots=True)
class LeaseState:
    """Answer to a heartbeat.

    Attributes:
        alive: False when the caller's epoch was fenced or the run ended: stop producing.
        cancel_requested: a cancel was requested (possibly on another replica).
    """

    alive: bool
    cancel_requested: bool = False


@dataclass(frozen=True, slots=True)
class OwnedRun:
    """An active run leased to a replica, as its replica heartbeat saw it.

    Attributes:
        run_id: the run's store key.
        epoch: the run's current epoch (a local producer of another epoch is fenced).
        cancel_requested: a cancel was requested (possibly on another replica).
    """

    run_id: str
    epoch: int
    cancel_requested: bool


@dataclass(frozen=True, slots=True)
class ReplicaDigest:
    """What a replica believes it holds: how many active runs it pumps and the sum of their
    epochs (:meth:`~gateway.store.protocol.RunStore.beat_replica` compares it with the
    store's).

    Attributes:
        runs: active runs leased to the replica.
        epochs: the sum of their epochs.
    """

    runs: int
    epochs: int


@dataclass(frozen=True, slots=True)
class ReplicaBeat:
    """Answer to :meth:`~gateway.store.protocol.RunStore.beat_replica`.

    Attributes:
        runs: ``complete``: every active run leased to the replica; else only those of them
            with a cancel requested (the store's digest matched the replica's: nothing else
            changed).
        complete: whether ``runs`` lists every active run (a run of the replica missing from
            it then left the replica: taken over or ended elsewhere).
    """

    runs: list[OwnedRun]
    complete: bool


@dataclass(frozen=True, slots=True)
class PurgeResult:
    """Rows removed by :meth:`RunStore.purge`."""

    runs: int = 0
    events: int = 0
    threads: int = 0
    messages: int = 0


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One row of ``runs``.

    Attributes:
        id: the run's store key (:func:`gateway.tenancy.run_key`: tenant, thread and AG-UI
            runId; :attr:`public_run_id` is the runId).
        thread_id: the thread's store key (:func:`gateway.tenancy.thread_key`;
            :attr:`public_thread_id` is the AG-UI threadId).
        status: see :data:`RunStatus`.
        route, upstream, model: what served the run (free text, may be None).
        message_id: the assistant message id of the run (AI SDK ``start.messageId``; history).
        usage: AG-UI ``TokenUsage[]`` wire list of the terminal event, if any.
        error: ``{"code", "message"}`` when the run ended with RUN_ERROR.
        epoch: current lease epoch (the only epoch allowed to append).
        last_seq: seq of the last durable event (0 when none).
        last_epoch: epoch of the last durable event (0 when none).
        lease_owner: replica id holding the lease.
        heartbeat_at: last heartbeat (or write) of the lease holder.
        cancel_requested: a cancel was requested and not yet carried out.
        created_at, updated_at: row times; finished_at: when a terminal status was set.
        tenant: the tenant that started the run (None without tenancy).
        stored_bytes: bytes of JSON the run stored (its events and the history items it
            added): what counts against its tenant's storage quota.
        continues: the ``toolCallId`` of every tool part of the assistant message an AI SDK
            continuation run continues (``continued_tool_call_ids`` of its request; ``()``
            for a fresh message): the AI SDK encoder's ``continues``, so a resume or replay of
            the run forwards those calls' results as its POST did (issue 11 kind 4).
    """

    id: str
    thread_id: str
    status: RunStatus
    route: str | None
    upstream: str | None
    model: str | None
    message_id: str | None
    usage: Any
    error: JsonObject | None
    epoch: int
    last_seq: int
    last_epoch: int
    lease_owner: str | None
    heartbeat_at: datetime | None
    cancel_requested: bool
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    tenant: str | None = None
    stored_bytes: int = 0
    continues: tuple[str, ...] = ()

    @property
    def public_run_id(self) -> str:
        """The AG-UI runId clients know the run by."""
        return public_id(self.id)

    @property
    def public_thread_id(self) -> str:
        """The AG-UI threadId clients know the run's thread by."""
        return public_id(self.thread_id)

    @property
    def is_terminal(self) -> bool:
        """True when the run ended (its terminal event is durable)."""
        return self.status in TERMINAL_STATUSES

    @property
    def last_cursor(self) -> Cursor | None:
        """Cursor of the last durable event, or None when nothing is stored yet."""
        return Cursor(self.last_epoch, self.last_seq) if self.last_seq else None

    def check_cursor(self, cursor: Cursor, *, slack: int) -> None:
        """Refuse a resume cursor that cannot name an event of this run.

        A live run's producer may have published up to ``slack`` events past the durable end
        (its unflushed batch), in the current epoch or in a dead one; a terminal run's last
        epoch is entirely durable. The check cannot tell two runs' cursors apart when both
        are in range (the cursor format carries no run id, ``docs/runs.md`` §1).

        Raises:
            CursorMismatchError: epoch newer than the run's, or seq beyond what was published.
        """
        if cursor.epoch > self.epoch:
            raise CursorMismatchError(
                f"event id {cursor} does not belong to run {self.public_run_id!r} (unknown epoch)"
            )
        limit = (
            self.last_seq
            if self.is_terminal and cursor.epoch == self.epoch
            else (self.last_seq + slack)
        )
        if cursor.seq > limit:
            raise CursorMismatchError(
                f"event id {cursor} does not belong to run {self.public_run_id!r} "
                "(past its last event)"
            )


@dataclass(frozen=True, slots=True)
class RunMark:
    """What the idle re-check compares of a run row (:meth:`RunStore.get_run_marks`): its
    status and durable end, as in the run's :class:`RunRecord`.

    Attributes:
        id: the run's store key.
        status: see :data:`RunStatus`.
        last_epoch, last_seq: epoch and seq of the last durable event (0, 0 when none).
    """

    id: str
    status: RunStatus
    last_epoch: int
    last_seq: int

    @property
    def is_terminal(self) -> bool:
        """True when the run ended (as :attr:`RunRecord.is_terminal`)."""
        return self.status in TERMINAL_STATUSES

    @property
    def last_cursor(self) -> Cursor | None:
        """Cursor of the last durable event, or None (as :attr:`RunRecord.last_cursor`)."""
        return Cursor(self.last_epoch, self.last_seq) if self.last_seq else None


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of a thread's history (``GET /api/v1/agent/history``).

    Attributes:
        items: history items, oldest first, each with its ``sequence``.
        total: number of messages of the thread (all of them, not only this page).
        start_sequence, end_sequence: sequences of the first and last item (None if empty).
        next_before_sequence: pass as ``before_sequence`` for the previous page (None when
            there is none).
        has_more: older messages exist before ``start_sequence``.
    """

    items: list[JsonObject] = field(default_factory=list)
    total: int = 0
    start_sequence: int | None = None
    end_sequence: int | None = None
    next_before_sequence: int | None = None
    has_more: bool = False

    def to_json(self) -> JsonObject:
        """The response body: ``{items, total, start_sequence, end_sequence,
        next_before_sequence, has_more}``."""
        return {
            "items": self.items,
            "total": self.total,
            "start_sequence": self.start_sequence,
            "end_sequence": self.end_sequence,
            "next_before_sequence": self.next_before_sequence,
            "has_more": self.has_more,
        }


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One client API key (a row of ``api_keys``); the secret itself is never stored.

    Attributes:
        id: the key id, public (``agk_<id>_<secret>`` is the key a client sends).
        tenant: the tenant the key acts for.
        secret_sha256: hex SHA-256 of the key's secret part.
        routes: the routes the key may call (None: every route).
        name: a label for operators.
        created_at: when it was created; expires_at: when it stops working (None: never);
            revoked_at: when it was revoked (None: active).
    """

    id: str
    tenant: str
    secret_sha256: str
    routes: tuple[str, ...] | None
    name: str | None
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None

    def usable(self, now: datetime) -> bool:
        """True when the key is neither revoked nor expired at ``now``."""
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)


@dataclass(frozen=True, slots=True)
class TenantUsage:
    """What a tenant holds in the store right now.

    Attributes:
        active_runs: its queued or running runs.
        stored_bytes: bytes its stored runs hold (:attr:`RunRecord.stored_bytes`).
    """

    active_runs: int = 0
    stored_bytes: int = 0


@dataclass(frozen=True, slots=True)
class ThreadSummary:
    """One thread as :meth:`RunStore.list_threads` lists it.

    Attributes:
        thread_id: the thread's store key (:attr:`public_thread_id` is the AG-UI threadId).
        runs: how many runs of the thread are listed (those of the allowed routes).
        last_run_at: when the newest of them was created.
    """

    thread_id: str
    runs: int
    last_run_at: datetime

    @property
    def public_thread_id(self) -> str:
        """The AG-UI threadId clients know the thread by."""
        return public_id(self.thread_id)
