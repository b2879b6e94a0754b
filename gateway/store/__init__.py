"""Durable storage of runs: the :class:`RunStore` protocol and its SQL implementation.

Public API (re-exported here; the modules are implementation detail)::

    store = await open_store("sqlite+aiosqlite:///./agui-gateway.db")   # or postgresql+asyncpg://
    run = await store.create_run(run_id=..., thread_id=..., owner=replica_id)
    await store.append_events(run.id, run.epoch, [NewEvent(1, wire)])
    for ev in await store.read_events(run.id, after=parse_cursor("1.7")): ...

See ``docs/runs.md`` §1-§2 for the cursor/epoch design. ``Cursor``, ``RunEvent`` and
``JsonObject`` are the neutral :mod:`gateway.types` (shared with the broker), re-exported.
"""

from __future__ import annotations

from .cursor import MAX_CURSOR_PART, Cursor, parse_cursor
from .engine import DEFAULT_DATABASE_URL, create_engine, normalize_url
from .errors import (
    CursorError,
    CursorMismatchError,
    InterruptAnsweredError,
    InvalidCursorError,
    RunClosedError,
    RunExistsError,
    RunNotFoundError,
    RunStoreError,
    SequenceError,
    StaleEpochError,
    StoreUnavailableError,
    WriteRejectedError,
)
from .models import (
    ACTIVE_STATUSES,
    TERMINAL_EVENT_TYPES,
    TERMINAL_STATUSES,
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
from .protocol import HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, RunStore
from .sql import SqlRunStore, open_store

__all__ = [
    "ACTIVE_STATUSES",
    "DEFAULT_DATABASE_URL",
    "HISTORY_DEFAULT_LIMIT",
    "HISTORY_MAX_LIMIT",
    "MAX_CURSOR_PART",
    "TERMINAL_EVENT_TYPES",
    "TERMINAL_STATUSES",
    "ApiKey",
    "Cursor",
    "CursorError",
    "CursorMismatchError",
    "HistoryPage",
    "InterruptAnsweredError",
    "InvalidCursorError",
    "JsonObject",
    "LeaseState",
    "NewEvent",
    "OwnedRun",
    "PurgeResult",
    "ReplicaBeat",
    "ReplicaDigest",
    "RunClosedError",
    "RunEvent",
    "RunExistsError",
    "RunFinal",
    "RunMark",
    "RunNotFoundError",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "RunStoreError",
    "SequenceError",
    "SqlRunStore",
    "StaleEpochError",
    "StoreUnavailableError",
    "StoredEvent",
    "TenantUsage",
    "ThreadSummary",
    "WriteRejectedError",
    "create_engine",
    "normalize_url",
    "open_store",
    "parse_cursor",
]
