"""The hot run updates test ``status IN ('queued', 'running')`` with the statuses inline
(``sql_statements.is_active``) instead of an expanding parameter rendered on every execution
(issue 13). Proven equal, over random run rows and calls on SQLite and PostgreSQL, to the same
statements with the old ``status.in_(ACTIVE_STATUSES)``: the same rows returned, the same run
row afterwards.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import BinaryExpression
from sqlalchemy.sql.visitors import replacement_traverse

from gateway.store.models import ACTIVE_STATUSES, RunStatus
from gateway.store.schema import runs, threads
from gateway.store.sql_statements import APPEND_FINAL, APPEND_UPDATE, HEARTBEAT
from gateway.store.sql_writes import _batch_update

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends

from run_backends import STORES, looped_store

pytestmark = pytest.mark.timeout(300)


def _old_form(statement: Any) -> Any:
    """``statement`` with its inline ``status IN (...)`` back to ``status.in_(list)``."""

    def swap(element: Any, **_kw: Any) -> Any:
        if (
            isinstance(element, BinaryExpression)
            and element.left is runs.c.status
            and element.operator is operators.in_op
        ):
            return runs.c.status.in_(sorted(ACTIVE_STATUSES))
        return None

    old = replacement_traverse(statement, {}, swap)
    assert "POSTCOMPILE" in str(old.compile(dialect=sqlite.dialect()))
    assert "POSTCOMPILE" not in str(statement.compile(dialect=sqlite.dialect()))
    return old


_STATEMENTS = {
    "heartbeat": HEARTBEAT,
    "append": APPEND_UPDATE,
    "final": APPEND_FINAL,
    "batch": _batch_update(2),
}
_OLD = {name: _old_form(statement) for name, statement in _STATEMENTS.items()}

_RUN = st.tuples(
    st.sampled_from(get_args(RunStatus)), st.integers(1, 2), st.integers(0, 2)
)  # status, epoch, last_seq
_CALL = st.tuples(
    st.sampled_from(sorted(_STATEMENTS)),
    st.integers(1, 2),  # epoch
    st.integers(0, 2),  # previous seq
    st.sampled_from(["completed", "failed", "cancelled", "interrupted"]),
)


@pytest.fixture(params=STORES, scope="module")
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[asyncio.AbstractEventLoop, Any]]:
    yield from looped_store(request.param, tmp_path_factory.mktemp("active"))


def _params(name: str, ids: list[str], epoch: int, prev: int, final: str, now: Any) -> Any:
    if name == "heartbeat":
        return {"p_run_id": ids[0], "p_epoch": epoch, "p_now": now}
    if name == "batch":
        params: dict[str, Any] = {"p_now": now}
        for k, run_id in enumerate(ids):
            params.update(
                {f"i{k}": run_id, f"e{k}": epoch, f"p{k}": prev, f"l{k}": prev + 2, f"b{k}": 7}
            )
        return params
    params = {
        "p_run_id": ids[0],
        "p_epoch": epoch,
        "p_prev_seq": prev,
        "p_last_seq": prev + 1,
        "p_now": now,
        "p_status": "running",
        "p_bytes": 5,
    }
    if name == "final":
        params.update(p_status=final, p_usage={"t": 1}, p_error=None, p_model="m")
    return params


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(states=st.lists(_RUN, min_size=2, max_size=2), call=_CALL)
def test_inline_active_statuses_equal_the_expanding_list(
    backend: tuple[asyncio.AbstractEventLoop, Any], states: list[Any], call: Any
) -> None:
    loop, store = backend
    name, epoch, prev, final = call
    thread_id = f"a{uuid.uuid4().hex}"
    ids = [f"r{uuid.uuid4().hex}" for _ in states]

    async def one(statement: Any) -> Any:
        now = store.now()
        async with store.engine.connect() as conn:
            tx = await conn.begin()
            try:
                returned = [
                    tuple(r)
                    for r in (
                        await conn.execute(statement, _params(name, ids, epoch, prev, final, now))
                    ).all()
                ]
                after = (
                    await conn.execute(
                        sa.select(runs).where(runs.c.id.in_(ids)).order_by(runs.c.id)
                    )
                ).all()
                return sorted(returned), [tuple(r) for r in after]
            finally:
                await tx.rollback()

    async def main() -> None:
        now = store.now()
        async with store.engine.begin() as conn:
            await conn.execute(
                sa.insert(threads),
                {"id": thread_id, "next_position": 1, "created_at": now, "updated_at": now},
            )
            for run_id, (status, run_epoch, last_seq) in zip(ids, states, strict=True):
                await conn.execute(
                    sa.insert(runs),
                    {
                        "id": run_id,
                        "thread_id": thread_id,
                        "status": status,
                        "epoch": run_epoch,
                        "last_seq": last_seq,
                        "last_epoch": run_epoch,
                        "lease_owner": "o",
                        "heartbeat_at": now,
                        "cancel_requested": False,
                        "created_at": now,
                        "updated_at": now,
                        "stored_bytes": 0,
                    },
                )
        assert await one(_STATEMENTS[name]) == await one(_OLD[name])

    loop.run_until_complete(main())
