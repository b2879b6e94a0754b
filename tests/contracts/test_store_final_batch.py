"""A group's terminal appends update their run rows in one statement (``sql_writes.update_runs``
with terminal appends; issue 13), as its flushes do. Proven equal, over random run rows and
terminal batches on SQLite and PostgreSQL, to ``update_run`` (``APPEND_FINAL``) one run at a
time: the same record or error for each run, the same run rows afterwards (``usage`` and
``error`` compared as the stored JSON text too).
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

from gateway.store.errors import RunNotFoundError, WriteRejectedError
from gateway.store.models import NewEvent, RunFinal, RunStatus
from gateway.store.schema import runs, threads
from gateway.store.sql_writes import prepare_append, update_run, update_runs

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends

from run_backends import STORES, looped_store

pytestmark = pytest.mark.timeout(300)

_RUN = st.tuples(
    st.sampled_from(get_args(RunStatus)),
    st.integers(1, 2),  # epoch
    st.integers(0, 2),  # last seq
    st.sampled_from([None, "m0"]),  # model
)
_APPEND = st.tuples(
    st.integers(1, 2),  # epoch
    st.integers(1, 3),  # first seq
    st.integers(1, 2),  # events
    st.sampled_from(["completed", "failed", "cancelled", "interrupted"]),
    st.sampled_from([None, [{"inputTokens": 3}]]),  # usage
    st.sampled_from([None, {"code": "x", "message": "boom"}]),  # error
    st.sampled_from([None, "m1"]),  # model
)


@pytest.fixture(params=STORES, scope="module")
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[asyncio.AbstractEventLoop, Any]]:
    yield from looped_store(request.param, tmp_path_factory.mktemp("finals"))


def _outcome(out: Any) -> Any:
    if isinstance(out, WriteRejectedError | RunNotFoundError):
        return type(out).__name__, str(out)
    return out


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cases=st.lists(st.tuples(_RUN, _APPEND), min_size=1, max_size=4),
    missing=st.booleans(),  # one more append, of an unknown run
)
def test_batched_terminal_updates_equal_one_by_one(
    backend: tuple[asyncio.AbstractEventLoop, Any], cases: list[Any], missing: bool
) -> None:
    loop, store = backend
    thread_id = f"f{uuid.uuid4().hex}"

    def appends(ids: list[str]) -> list[Any]:
        out = []
        for run_id, (_, (epoch, first, count, status, usage, error, model)) in zip(
            ids, cases, strict=False
        ):
            events = [NewEvent(seq=first + k, event={"type": "X"}) for k in range(count)]
            final = RunFinal(status, usage=usage, error=error, model=model)
            out.append(prepare_append(run_id, epoch, events, final))
        return out

    async def one(batched: bool) -> Any:
        ids = [f"r{uuid.uuid4().hex}" for _ in cases]
        now = store.now()
        async with store.engine.connect() as conn:
            tx = await conn.begin()
            try:
                for run_id, ((status, epoch, last_seq, model), _) in zip(ids, cases, strict=True):
                    await conn.execute(
                        sa.insert(runs),
                        {
                            "id": run_id,
                            "thread_id": thread_id,
                            "status": status,
                            "model": model,
                            "epoch": epoch,
                            "last_seq": last_seq,
                            "last_epoch": epoch,
                            "lease_owner": "o",
                            "heartbeat_at": now,
                            "cancel_requested": True,
                            "created_at": now,
                            "updated_at": now,
                            "stored_bytes": 4,
                        },
                    )
                batch = appends(ids)
                if missing:
                    unknown = NewEvent(seq=1, event={"type": "X"})
                    batch.append(
                        prepare_append(f"u{uuid.uuid4().hex}", 1, [unknown], RunFinal("failed"))
                    )
                if batched:
                    outcomes = [_outcome(o) for o in await update_runs(conn, batch, now)]
                else:
                    outcomes = []
                    for append in batch:
                        try:
                            outcomes.append(await update_run(conn, append, now))
                        except (WriteRejectedError, RunNotFoundError) as exc:
                            outcomes.append(_outcome(exc))
                rows = (
                    await conn.execute(
                        sa.select(
                            runs,
                            sa.cast(runs.c.usage, sa.Text).label("usage_text"),
                            sa.cast(runs.c.error, sa.Text).label("error_text"),
                        ).where(runs.c.id.in_(ids))
                    )
                ).all()
                by_id = {row.id: row for row in rows}
                # run ids differ between the two passes: compare by position
                state = [tuple(by_id[i])[1:] for i in ids]
                records = [o[0] if isinstance(o, tuple) else type(o).__name__ for o in outcomes]
                fields = [
                    (o.status, o.last_seq, o.usage, o.error, o.model, o.finished_at)
                    for o in outcomes
                    if not isinstance(o, tuple)
                ]
                names = [o if isinstance(o, tuple) else None for o in outcomes]
                return state, records, fields, _normal(names, ids)
            finally:
                await tx.rollback()

    async def main() -> None:
        async with store.engine.begin() as conn:
            now = store.now()
            await conn.execute(
                sa.insert(threads),
                {"id": thread_id, "next_position": 1, "created_at": now, "updated_at": now},
            )
        assert await one(True) == await one(False)

    loop.run_until_complete(main())


def _normal(names: list[Any], ids: list[str]) -> list[Any]:
    """Errors with the run ids (which differ between the passes) replaced by their index."""
    out = []
    for name in names:
        if name is None:
            out.append(None)
            continue
        kind, message = name
        for k, run_id in enumerate(ids):
            message = message.replace(run_id, f"#{k}")
        out.append((kind, message.split("'u")[0]))
    return out
