"""A SQLite group commit whose writer is cancelled while the transaction is in the worker call
(``gateway/store/sqlite_held.py``, ``group_commit.GroupCommitter._commit``): a cancel cannot
stop the worker thread, so the callers are answered by what the database holds (docs/runs.md
§2: a write is acknowledged by what is stored, never told "failed" for a stored batch).

Each case stops the worker inside the call (before ``BEGIN``), cancels the writer task, then
lets the worker go on: committing, or failing inside the transaction (rolled back). A cancel
that lands before the worker call starts stores nothing and tells the caller so.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from gateway.store import NewEvent, RunStoreError, SqlRunStore, open_store, sqlite_held

N = 200


async def _stored(store: SqlRunStore, run_id: str) -> list[int]:
    seqs: list[int] = []
    after = None
    while page := await store.read_events(run_id, after=after, limit=1000):
        seqs += [event.cursor.seq for event in page]
        after = page[-1].cursor
    return seqs


async def _cancel_in_the_call(
    store: SqlRunStore, monkeypatch: pytest.MonkeyPatch, *, fail: bool
) -> Any:
    """Append N deltas, cancel the writer while the worker holds the call; the outcome."""
    entered, go = threading.Event(), threading.Event()
    original = sqlite_held.run_transaction

    def held_back(raw: Any, dialect: Any, events: Any, body: Any) -> Any:
        entered.set()
        go.wait(10)
        if not fail:
            return original(raw, dialect, events, body)

        async def failing(connection: Any) -> None:
            await body(connection)  # every statement sent, then the transaction fails
            raise RuntimeError("the transaction fails after its statements")

        return original(raw, dialect, events, failing)

    monkeypatch.setattr(sqlite_held, "run_transaction", held_back)
    events = [
        NewEvent(seq=seq, event={"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"})
        for seq in range(2, N + 2)
    ]
    append = asyncio.ensure_future(store.append_events("r", 1, events))
    assert await asyncio.to_thread(entered.wait, 10)
    assert store.group is not None and store.group._state is not None
    writer = store.group._state.task
    assert writer is not None
    writer.cancel()
    await asyncio.sleep(0.05)  # the cancel is delivered while the worker still holds the call
    assert not append.done()  # the caller waits for what the worker does
    go.set()
    try:
        return (await append).last_seq
    except RunStoreError as exc:
        return exc
    finally:
        monkeypatch.setattr(sqlite_held, "run_transaction", original)


async def _open(tmp_path: Path) -> SqlRunStore:
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path}/runs.db")
    await store.create_run(
        run_id="r",
        thread_id="t",
        owner="me",
        events=[NewEvent(seq=1, event={"type": "RUN_STARTED", "runId": "r", "threadId": "t"})],
    )
    return store


async def test_a_group_committed_after_its_writer_was_cancelled_is_answered_as_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await _open(tmp_path)
    outcome = await _cancel_in_the_call(store, monkeypatch, fail=False)
    assert outcome == N + 1  # told done ...
    assert await _stored(store, "r") == list(range(1, N + 2))  # ... and it is stored, once
    assert (await store.get_run("r")).last_seq == N + 1
    await store.close()


async def test_a_group_rolled_back_after_its_writer_was_cancelled_is_answered_as_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await _open(tmp_path)
    outcome = await _cancel_in_the_call(store, monkeypatch, fail=True)
    assert isinstance(outcome, RunStoreError)  # told failed ...
    assert await _stored(store, "r") == [1]  # ... and nothing of it is stored
    retry = [
        NewEvent(seq=2, event={"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "y"})
    ]
    assert (await store.append_events("r", 1, retry)).last_seq == 2  # a retry goes on from seq 1
    await store.close()
