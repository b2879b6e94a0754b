"""A group's terminal writes: ``sql_writes.finish_runs`` writes the single history items of
runs of distinct threads together (``history_sql.add_own_items``: one lock of all their
threads, one insert of the messages, one of the aliases; issue 13), the rest one by one.
Proven equal, over random thread histories and groups of terminal writes on SQLite and
PostgreSQL, to ``finish_run`` called for each run in order: the same messages, positions,
aliases and ``next_position`` of every thread, and the same error.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncConnection

from gateway.store.history_sql import add_items, ensure_thread
from gateway.store.models import RunFinal
from gateway.store.schema import message_aliases, messages, threads
from gateway.store.sql_writes import finish_run, finish_runs

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends

from run_backends import STORES, looped_store

pytestmark = pytest.mark.timeout(300)

_IDS = st.sampled_from(["a", "b", "c", "d"])
_ITEM = st.fixed_dictionaries(
    {"id": _IDS, "role": st.sampled_from(["user", "assistant"])},
    optional={
        "aliases": st.lists(_IDS, max_size=2),
        "parts": st.lists(st.sampled_from(["p", "q"]), max_size=2),
    },
)
_HISTORY = st.lists(  # calls made on a thread before the group: (items, replace, run id)
    st.tuples(
        st.lists(_ITEM, min_size=1, max_size=3), st.booleans(), st.sampled_from(["r0", "r9"])
    ),
    max_size=3,
)
_FINAL = st.tuples(
    st.integers(0, 3),  # the thread (of four)
    st.lists(_ITEM, max_size=2),  # the run's history items (mostly one)
    st.sampled_from(["r1", "r2", "r9"]),
)


@pytest.fixture(params=STORES, scope="module")
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[asyncio.AbstractEventLoop, Any]]:
    yield from looped_store(request.param, tmp_path_factory.mktemp("own"))


async def _state(conn: AsyncConnection, thread_id: str) -> Any:
    rows = (
        await conn.execute(
            sa.select(
                messages.c.message_id,
                messages.c.position,
                messages.c.role,
                messages.c.run_id,
                messages.c.visibility,
                messages.c.payload,
            )
            .where(messages.c.thread_id == thread_id)
            .order_by(messages.c.position)
        )
    ).all()
    aliases = (
        await conn.execute(
            sa.select(message_aliases.c.alias, message_aliases.c.message_id)
            .where(message_aliases.c.thread_id == thread_id)
            .order_by(message_aliases.c.alias)
        )
    ).all()
    position = (
        await conn.execute(sa.select(threads.c.next_position).where(threads.c.id == thread_id))
    ).scalar()
    return [tuple(r) for r in rows], [tuple(a) for a in aliases], position


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    histories=st.lists(_HISTORY, min_size=4, max_size=4),
    finals=st.lists(_FINAL, min_size=1, max_size=5),
)
def test_batched_terminal_items_equal_one_by_one(
    backend: tuple[asyncio.AbstractEventLoop, Any], histories: list[Any], finals: list[Any]
) -> None:
    loop, store = backend
    key = uuid.uuid4().hex[:12]
    new = [f"n{key}{k}" for k in range(4)]
    old = [f"o{key}{k}" for k in range(4)]

    async def prepare(thread_ids: list[str]) -> None:
        async with store.engine.begin() as conn:
            for thread_id, calls in zip(thread_ids, histories, strict=True):
                await ensure_thread(conn, thread_id, store.now())
                for items, replace, run_id in calls:
                    try:
                        async with conn.begin_nested():
                            await add_items(
                                conn,
                                thread_id,
                                items,
                                run_id=run_id,
                                now=store.now(),
                                replace=replace,
                            )
                    except sa.exc.IntegrityError:
                        pass  # an item id twice in one call: the same for both sets

    async def group(thread_ids: list[str], batched: bool) -> Any:
        finished = [
            (
                SimpleNamespace(thread_id=thread_ids[index], id=run_id),
                RunFinal("completed", messages=items),
            )
            for index, items, run_id in finals
        ]
        now = store.now()
        try:
            async with store.engine.begin() as conn:
                if batched:
                    await finish_runs(conn, finished, now)  # type: ignore[arg-type]
                else:
                    for record, final in finished:
                        await finish_run(conn, record, final, now)  # type: ignore[arg-type]
        except sa.exc.IntegrityError:
            return "IntegrityError"
        return None

    async def main() -> None:
        await prepare(new)
        await prepare(old)
        assert await group(new, True) == await group(old, False)
        async with store.engine.connect() as conn:
            for n, o in zip(new, old, strict=True):
                assert await _state(conn, n) == await _state(conn, o)

    loop.run_until_complete(main())


def test_a_group_of_terminal_items_costs_three_statements(
    backend: tuple[asyncio.AbstractEventLoop, Any],
) -> None:
    """What the batch is for: three runs of three threads ending in one group write their
    history items in three statements (nine one by one)."""
    loop, store = backend
    key = uuid.uuid4().hex[:12]
    thread_ids = [f"s{key}{k}" for k in range(3)]
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement.split()[0])

    async def main() -> None:
        async with store.engine.begin() as conn:
            for thread_id in thread_ids:
                await ensure_thread(conn, thread_id, store.now())
        finished = [
            (
                SimpleNamespace(thread_id=thread_id, id=f"r{k}"),
                RunFinal("completed", messages=[{"id": f"m{k}", "role": "assistant"}]),
            )
            for k, thread_id in enumerate(thread_ids)
        ]
        sa.event.listen(store.engine.sync_engine, "before_cursor_execute", count)
        try:
            async with store.engine.begin() as conn:
                await finish_runs(conn, finished, store.now())  # type: ignore[arg-type]
        finally:
            sa.event.remove(store.engine.sync_engine, "before_cursor_execute", count)
        assert statements == ["UPDATE", "INSERT", "INSERT"]
        async with store.engine.connect() as conn:
            for k, thread_id in enumerate(thread_ids):
                rows, aliases, position = await _state(conn, thread_id)
                assert [(r[0], r[1], r[3]) for r in rows] == [(f"m{k}", 1, f"r{k}")]
                assert aliases == [(f"m{k}", f"m{k}")]
                assert position == 2

    loop.run_until_complete(main())
