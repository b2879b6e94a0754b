"""The :class:`RunStore` protocol: what the pump, the readers and the reaper need from storage.

Follows ``docs/runs.md`` §1, §4: the store is the source of truth for order; the single
producer of a run assigns seqs and the store enforces that they continue the durable end;
every write is fenced by the lease epoch, so a producer that lost its lease cannot append
after a takeover.

History items (the ``messages`` argument of :meth:`RunStore.add_messages` and
:attr:`RunFinal.messages`) are JSON objects with at least ``id`` (str), ``role`` (str) and
``visibility`` (``{"history": bool, "context": bool}``); an optional ``aliases`` list names the
AG-UI message ids the item covers (it is stored apart and removed from the payload).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from .cursor import Cursor
from .models import (
    ApiKey,
    HistoryPage,
    JsonObject,
    LeaseState,
    NewEvent,
    OwnedRun,
    PurgeResult,
    ReplicaBeat,
    ReplicaDigest,
    RunEvent,
    RunFinal,
    RunMark,
    RunRecord,
    RunStatus,
    StoredEvent,
    TenantUsage,
    ThreadSummary,
)

__all__ = ["HISTORY_DEFAULT_LIMIT", "HISTORY_MAX_LIMIT", "RunStore"]

HISTORY_DEFAULT_LIMIT = 50
"""History page size when the client gives none (issue 3 §6)."""

HISTORY_MAX_LIMIT = 200
"""Largest history page; bigger limits are clamped."""


@runtime_checkable
class RunStore(Protocol):
    """Durable storage of threads, runs, events and history (SQLite or PostgreSQL)."""

    def now(self) -> datetime:
        """The store's clock (aware UTC); leases and retention compare against it."""
        ...

    async def create_run(
        self,
        *,
        run_id: str,
        thread_id: str,
        owner: str,
        route: str | None = None,
        upstream: str | None = None,
        model: str | None = None,
        message_id: str | None = None,
        status: RunStatus = "queued",
        input_messages: Sequence[JsonObject] = (),
        tenant: str | None = None,
        answers: Sequence[tuple[str, str]] = (),
        events: Sequence[NewEvent] = (),
        continues: Sequence[str] = (),
    ) -> RunRecord:
        """Create a run (and its thread if new) with epoch 1, leased to ``owner``.

        ``answers`` (``(interruptId, status)`` of the request's ``RunAgentInput.resume[]``
        entries) are claimed for the thread in the same transaction: an interrupt is answered
        once, so when another run of the thread claimed one of them (or one is named twice)
        nothing is recorded and :class:`InterruptAnsweredError` is raised (``docs/runs.md`` §7).

        ``input_messages`` (history items) are added to the thread's history unless an item
        with the same id or alias is already there; their JSON size starts the run's
        ``stored_bytes``. ``tenant`` is recorded for the per-tenant usage
        (:meth:`tenant_usage`); ids are the caller's keys (:mod:`gateway.tenancy`).

        ``events``: the run's first events (seqs ``1, 2, ...`` of epoch 1, e.g. the announced
        RUN_STARTED), stored in the same transaction as the run row, which then is
        ``running`` with ``last_seq = len(events)``: the run's first byte waits for one commit,
        not a create and then an append (issue 13 item 2).

        ``continues``: the tool call ids of the message an AI SDK continuation continues
        (:attr:`RunRecord.continues`, stored as given).

        Raises:
            RunExistsError: ``run_id`` is taken (checked first: a retry of the same run;
                nothing is stored).
            InterruptAnsweredError: 409 ``INTERRUPT_ANSWERED``, an answer was claimed before.
            SequenceError: ``events`` do not start at seq 1 or are not contiguous.
        """
        ...

    async def answered_interrupts(
        self, thread_id: str, interrupt_ids: Sequence[str]
    ) -> dict[str, str]:
        """``{interruptId: runId}`` for those of ``interrupt_ids`` the thread has answered (the
        run that claimed each)."""
        ...

    async def keep_upstream_ids(self, thread_id: str, mapping: Mapping[str, str]) -> None:
        """Keep ``mapping`` (``up-<32 hex>`` gateway id -> the upstream's own id, which the
        store refused: :mod:`gateway.upstream_ids`) for the thread; an id already kept stays
        as it is (the gateway id is a hash of the original). Creates the thread row when
        missing."""
        ...

    async def upstream_ids(self, thread_id: str, gateway_ids: Collection[str]) -> dict[str, str]:
        """``{gateway id: upstream id}`` for those of ``gateway_ids`` the thread kept
        (:meth:`keep_upstream_ids`); the others are left out."""
        ...

    async def get_run(self, run_id: str) -> RunRecord:
        """Return the run.

        Raises:
            RunNotFoundError: unknown (or purged) run.
        """
        ...

    async def get_runs(self, run_ids: Collection[str]) -> dict[str, RunRecord]:
        """``{run id: record}`` for those of ``run_ids`` that exist (unknown or purged ids are
        left out, never an error; repeated ids count once): the batched re-check of idle
        readers (:mod:`gateway.runs.recheck`, issue 13 item 5), a few queries for any number
        of ids instead of one :meth:`get_run` each.

        Raises:
            RunStoreError: the read failed.
        """
        ...

    async def get_run_marks(self, run_ids: Collection[str]) -> dict[str, RunMark]:
        """``{run id: mark}`` for those of ``run_ids`` that exist, as :meth:`get_runs` (unknown
        ids left out, repeats once) but only each run's status and durable end
        (:class:`RunMark`, equal to its record's): what the batched idle re-check compares
        (:mod:`gateway.runs.recheck`), without building whole records.

        Raises:
            RunStoreError: the read failed.
        """
        ...

    async def list_runs(
        self, thread_id: str, *, active_only: bool = False, limit: int = 100
    ) -> list[RunRecord]:
        """Runs of a thread, newest first (only queued/running ones with ``active_only``)."""
        ...

    async def list_threads(
        self,
        *,
        tenant: str | None,
        routes: Collection[str] | None = None,
        limit: int = 100,
    ) -> list[ThreadSummary]:
        """Threads ``tenant`` ran something on (None: the runs recorded without tenancy), the
        most recently run first, at most ``limit``; with ``routes``, only runs of those routes
        count (a thread with none is not listed)."""
        ...

    async def append_events(
        self,
        run_id: str,
        epoch: int,
        events: Sequence[NewEvent],
        *,
        final: RunFinal | None = None,
    ) -> RunRecord:
        """Append a batch atomically; with ``final`` also set the terminal status.

        The batch's seqs must be ``last_seq + 1, last_seq + 2, ...``. The write also counts as
        a heartbeat and moves a queued run to running, and adds the JSON size of the events
        (and of ``final.messages``) to the run's ``stored_bytes``. Returns the updated run.

        Raises:
            RunNotFoundError: unknown run.
            StaleEpochError: ``epoch`` is not the run's current epoch (fenced).
            RunClosedError: the run already ended.
            SequenceError: the seqs do not continue the durable end.
        """
        ...

    async def read_events(
        self, run_id: str, *, after: Cursor | None = None, limit: int = 500
    ) -> list[StoredEvent]:
        """Durable events strictly after ``after`` (all when None), in order, at most ``limit``.

        "After" compares ``(epoch, seq)``: a cursor past the durable end of a dead epoch
        continues with the first event of the next epoch.
        """
        ...

    async def read_wire(
        self, run_id: str, *, after: Cursor | None = None, limit: int = 500
    ) -> list[RunEvent]:
        """The same events as :meth:`read_events`, as plain :class:`RunEvent` (cursor and wire
        dict): what readers replay. Skips the ``durable`` and ``created_at`` columns (decoding
        the timestamps is about half the cost of a replay page). A store that holds the
        events' JSON text sets :attr:`RunEvent.json` (``orjson.dumps(event)``) so the encoder
        frames it without serializing again."""
        ...

    async def heartbeat(self, run_id: str, epoch: int) -> LeaseState:
        """Refresh the lease of ``epoch``; ``alive=False`` when fenced, ended or unknown."""
        ...

    async def heartbeat_replica(self, replica_id: str) -> list[OwnedRun]:
        """Refresh the lease of replica ``replica_id`` (created on its first beat) for all its
        runs at once, and return its active runs (epoch, cancel flag): one write per replica
        per heartbeat interval instead of one per run (issue 13 item 5). A run is stale only
        when its own heartbeat and its owner replica's are both old (:meth:`list_stale_runs`).

        Raises:
            RunStoreError: the write failed.
        """
        ...

    async def beat_replica(
        self, replica_id: str, *, known: ReplicaDigest | None = None
    ) -> ReplicaBeat:
        """:meth:`heartbeat_replica` answering only what changed: with ``known`` (the active
        runs the replica pumps: count and sum of epochs) equal to the store's, only the runs
        with a cancel requested (``complete=False``); otherwise every active run of the
        replica (``complete=True``), as :meth:`heartbeat_replica` (issue 13 item 5.5: a beat
        of a replica with 10,000 runs reads one aggregate, not 10,000 rows).

        Raises:
            RunStoreError: the write failed.
        """
        ...

    async def drop_replica(self, replica_id: str) -> None:
        """Remove the replica's lease row (clean shutdown; idempotent): runs it still owns
        are then judged by their own heartbeat."""
        ...

    async def request_cancel(self, run_id: str) -> RunRecord:
        """Flag the run for cancellation (idempotent; no-op once it ended).

        Raises:
            RunNotFoundError: unknown run.
        """
        ...

    async def list_stale_runs(self, stale_before: datetime, *, limit: int = 100) -> list[RunRecord]:
        """Queued/running runs whose heartbeat is older than ``stale_before`` and whose owner
        replica's heartbeat (:meth:`heartbeat_replica`), if it has one, is too; oldest first."""
        ...

    async def take_over(
        self, run_id: str, *, owner: str, expected_epoch: int, stale_before: datetime
    ) -> RunRecord | None:
        """Take the lease of a stale run with a new epoch (``expected_epoch + 1``).

        Succeeds only if the run is still active, still at ``expected_epoch`` and still stale
        (its heartbeat and its owner replica's older than ``stale_before``); returns None
        otherwise (someone else won, or the producer came back).
        """
        ...

    async def add_messages(
        self, thread_id: str, items: Sequence[JsonObject], *, run_id: str | None = None
    ) -> int:
        """Append history items not yet known (by id or alias); returns how many were added.

        The thread is created when missing.
        """
        ...

    async def history(
        self,
        thread_id: str,
        *,
        limit: int = HISTORY_DEFAULT_LIMIT,
        before_sequence: int | None = None,
    ) -> HistoryPage:
        """The ``limit`` newest items with ``sequence < before_sequence`` (all when None).

        ``limit`` is clamped to ``1..HISTORY_MAX_LIMIT``. An unknown thread gives an empty page.
        """
        ...

    async def create_api_key(self, key: ApiKey) -> None:
        """Store a client API key (its secret's hash only).

        Raises:
            RunStoreError: its id is taken.
        """
        ...

    async def get_api_key(self, key_id: str) -> ApiKey | None:
        """The key with that id, revoked and expired ones included; None when unknown."""
        ...

    async def list_api_keys(self, *, tenant: str | None = None) -> list[ApiKey]:
        """Every key (only ``tenant``'s when given), oldest first."""
        ...

    async def revoke_api_key(self, key_id: str) -> ApiKey | None:
        """Revoke the key (idempotent: the first revocation time is kept); None when unknown."""
        ...

    async def tenant_usage(self, tenant: str | None) -> TenantUsage:
        """The tenant's active runs and the bytes its stored runs hold (None: the runs
        recorded without tenant)."""
        ...

    async def purge(self, before: datetime) -> PurgeResult:
        """Retention: delete runs that ended before ``before`` with their events, then threads
        with no run left and no activity since ``before`` with their history."""
        ...

    async def check(self) -> None:
        """Return when the database answers (readiness, start-up).

        Raises:
            StoreUnavailableError: it cannot be reached; RunStoreError: it failed otherwise.
        """
        ...

    async def healthy(self) -> bool:
        """True when :meth:`check` passes; never raises."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
