"""SQLite raw statements (``gateway/store/sqlite_raw.py``): for each of the store's write
statements, the SQL text and driver parameters the raw connection sends are the ones
SQLAlchemy's execution sends for the same statement and parameters (captured from SQLAlchemy's
``before_cursor_execute`` on the store's own engine), datetimes of any zone, JSON, booleans and
expanding ``IN`` lists included."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.store import history_sql as history
from gateway.store import open_store
from gateway.store import replicas_sql as replicas
from gateway.store import sql_statements as statements
from gateway.store import sql_writes as writes
from gateway.store.sqlite_raw import _Prepared

_stamps = st.datetimes(
    min_value=datetime(2000, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]),
)
_json = st.none() | st.dictionaries(
    st.text(max_size=3), st.integers(-(2**53), 2**53) | st.text(max_size=3)
)
_id = st.text(st.characters(codec="utf-8"), max_size=6)


def _cases(now: datetime, run: str, n: int, usage: Any, flag: bool) -> list[tuple[Any, Any]]:
    batch: dict[str, Any] = {"p_now": now}
    final: dict[str, Any] = {"p_now": now}
    for k in range(n):
        batch.update({f"i{k}": f"{run}{k}", f"e{k}": k, f"p{k}": k, f"l{k}": k + 1, f"b{k}": 9})
        final.update({f"i{k}": f"{run}{k}", f"e{k}": k, f"p{k}": k, f"l{k}": k + 1, f"b{k}": 9})
        final.update({f"s{k}": "failed", f"u{k}": usage, f"x{k}": usage, f"m{k}": None})
    append = {
        "p_run_id": run,
        "p_epoch": n,
        "p_prev_seq": 1,
        "p_last_seq": 2,
        "p_now": now,
        "p_status": "running",
        "p_bytes": 5,
    }
    return [
        (statements.HEARTBEAT, {"p_run_id": run, "p_epoch": n, "p_now": now}),
        (statements.APPEND_UPDATE, append),
        (statements.APPEND_FINAL, {**append, "p_usage": usage, "p_error": usage, "p_model": run}),
        (statements.TOUCH_THREAD, {"p_thread_id": run, "p_now": now}),
        (writes._batch_update(n), batch),
        (writes._batch_update(n, True), final),
        (history._LOCK_THREAD, {"p_thread_id": run, "p_now": now, "p_reserve": n}),
        (history._upsert_thread("sqlite"), {"p_thread_id": run, "p_now": now, "p_reserve": n}),
        (history._lock_threads(n), {"p_now": now, **{f"t{k}": f"{run}{k}" for k in range(n)}}),
        (history._KNOWN_ALIASES, {"p_thread_id": run, "p_names": [f"{run}{k}" for k in range(n)]}),
        (replicas._OWNED, {"p_replica": run}),
        (replicas._CANCELLED, {"p_replica": run}),
        (
            statements.CREATE_RUN,
            {
                "id": run,
                "thread_id": run,
                "status": "queued",
                "epoch": 1,
                "heartbeat_at": now,
                "cancel_requested": flag,
                "created_at": now,
                "updated_at": now,
                "continues": [run] if flag else None,
                "usage": usage,
            },
        ),
        (
            history._INSERT_MESSAGE,
            {
                "thread_id": run,
                "message_id": run,
                "position": n,
                "created_at": now,
                "role": "user",
                "run_id": None,
                "visibility": 3,
                "payload": {"id": run, "content": usage},
            },
        ),
    ]


@settings(max_examples=25, deadline=None)
@given(
    now=_stamps,
    run=_id,
    n=st.integers(1, 4),
    usage=_json,
    flag=st.booleans(),
)
def test_raw_statements_send_what_sqlalchemy_sends(
    now: datetime, run: str, n: int, usage: Any, flag: bool
) -> None:
    async def main(tmp: str) -> None:
        store = await open_store(f"sqlite+aiosqlite:///{tmp}/runs.db")
        sent: list[tuple[str, Any]] = []

        def capture(_conn: Any, _cursor: Any, text: str, parameters: Any, *_: Any) -> None:
            sent.append((text, parameters))

        sa.event.listen(store.engine.sync_engine, "before_cursor_execute", capture)
        try:
            for statement, params in _cases(now, run, n, usage, flag):
                sent.clear()
                async with store.engine.connect() as conn:
                    try:
                        await conn.execute(statement, params)
                    except sa.exc.DBAPIError:
                        pass  # a foreign key or NOT NULL: what was sent is what counts
                    await conn.rollback()
                keys = tuple(sorted(params))
                text, values = _Prepared(statement, store.engine.dialect, keys).bind(params)
                assert sent == [(text, values)], str(statement)
        finally:
            sa.event.remove(store.engine.sync_engine, "before_cursor_execute", capture)
            await store.close()

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(tmp))
