"""The public names of the durable-run packages are exactly the ones the HTTP layer wires."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gateway.broker
import gateway.runs
import gateway.store
import gateway.types
from gateway.store import Cursor, InvalidCursorError, parse_cursor

PUBLIC = {
    gateway.store: {
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
        "StoreUnavailableError",
        "StaleEpochError",
        "StoredEvent",
        "TenantUsage",
        "ThreadSummary",
        "WriteRejectedError",
        "create_engine",
        "normalize_url",
        "open_store",
        "parse_cursor",
    },
    gateway.broker: {
        "DEFAULT_ENDED_TTL",
        "DEFAULT_MAXLEN",
        "DEFAULT_MAX_BYTES",
        "DEFAULT_PREFIX",
        "DEFAULT_READER_MAXLEN",
        "DEFAULT_READER_MAX_BYTES",
        "DEFAULT_TTL",
        "Broker",
        "BrokerUnavailableError",
        "BrokerUsage",
        "InProcessBroker",
        "RedisStreamsBroker",
        "Subscription",
        "open_broker",
        "wire_size",
    },
    gateway.types: {"MAX_CURSOR_PART", "TERMINAL_EVENT_TYPES", "Cursor", "JsonObject", "RunEvent"},
    gateway.runs: {
        "BATCHED_TYPES",
        "CANCELED_MESSAGE",
        "INTERRUPTED_MESSAGE",
        "Prelude",
        "Reaper",
        "RunFold",
        "RunManager",
        "RunOutcome",
        "RunPump",
        "RunReader",
        "RunSettings",
        "RunWriter",
        "agui_messages_from_parts",
        "build_snapshot_prelude",
        "history_items_to_agui",
        "input_items",
        "read_run",
        "replica_id",
        "run_item",
        "terminal_status",
    },
}


@pytest.mark.parametrize("module", list(PUBLIC), ids=lambda m: m.__name__)
def test_public_names_are_exactly_the_intended_ones(module: object) -> None:
    assert set(module.__all__) == PUBLIC[module]  # type: ignore[attr-defined]
    for name in module.__all__:  # type: ignore[attr-defined]
        assert getattr(module, name) is not None


def test_cursors_order_by_epoch_then_seq() -> None:
    assert Cursor(1, 99) < Cursor(2, 1) < Cursor(2, 2)
    assert str(Cursor(3, 41)) == "3.41" and parse_cursor("3.41") == Cursor(3, 41)
    assert Cursor(2, 5).follows(Cursor(2, 4)) and not Cursor(3, 5).follows(Cursor(2, 4))
    assert Cursor(1, 1).follows(None) and not Cursor(1, 2).follows(None)
    with pytest.raises(InvalidCursorError):
        parse_cursor("9007199254740992.1")  # past 2**53 - 1


def test_open_broker_and_store_urls() -> None:
    assert isinstance(gateway.broker.open_broker(None), gateway.broker.InProcessBroker)
    with pytest.raises(ValueError):
        gateway.broker.open_broker("http://localhost")
    assert gateway.store.normalize_url("sqlite:///x.db").drivername == "sqlite+aiosqlite"
    assert gateway.store.normalize_url("postgres://u@h/db").drivername == "postgresql+asyncpg"
    with pytest.raises(ValueError):
        gateway.store.normalize_url("mysql://u@h/db")


def test_store_and_broker_share_the_neutral_value_types() -> None:
    for name in ("Cursor", "RunEvent", "JsonObject", "TERMINAL_EVENT_TYPES", "MAX_CURSOR_PART"):
        assert getattr(gateway.store, name) is getattr(gateway.types, name), name


@pytest.mark.parametrize("module", ["gateway.broker", "gateway.types"])
def test_the_broker_does_not_load_the_store(module: str) -> None:
    """The broker builds on :mod:`gateway.types` only: importing it (in a fresh interpreter)
    loads neither the store package nor its database libraries."""
    code = (
        f"import sys, {module}\n"
        "loaded = sorted(m for m in ('gateway.store', 'sqlalchemy', 'alembic') if m in sys.modules)\n"
        "print(','.join(loaded))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
