"""SQLite raw group commits (``gateway/store/sqlite_raw.py``, issue 13): a group whose whole
transaction runs on the raw ``sqlite3`` connection in one worker call stores exactly what the
same group through SQLAlchemy stores, and answers every caller the same (records, refusals,
conflicts), for random groups of run creations (input messages, RUN_STARTED, interrupt
answers), appends (good, out of sequence, fenced), terminal appends (history items new or
already stored), run heartbeats and replica beats. Every table is compared raw, with the
SQLite type of every value."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.store import NewEvent, RunFinal, SqlRunStore, open_store
from gateway.store.schema import metadata

_THREADS = ("t0", "t1", "t2")
_RUNS = ("r0", "r1", "r2", "r3")

_message = st.fixed_dictionaries(
    {"id": st.sampled_from(["m0", "m1", "m2", "a0"]), "role": st.sampled_from(["user", "tool"])},
    optional={"content": st.text(max_size=8), "aliases": st.lists(st.sampled_from(["x", "y"]))},
)
_item = st.fixed_dictionaries(
    {"id": st.sampled_from(["a0", "a1", "m0"]), "role": st.just("assistant")},
    optional={"content": st.text(max_size=8), "parts": st.lists(st.text(max_size=3), max_size=2)},
)
_op = st.one_of(
    st.tuples(
        st.just("create"),
        st.sampled_from(_RUNS),
        st.sampled_from(_THREADS),
        st.lists(_message, max_size=3),
        st.lists(st.sampled_from(["i0", "i1"]), max_size=2),
        st.booleans(),  # with RUN_STARTED
    ),
    st.tuples(st.just("append"), st.sampled_from(_RUNS), st.integers(1, 4), st.integers(-1, 1)),
    st.tuples(
        st.just("final"),
        st.sampled_from(_RUNS),
        st.sampled_from(["completed", "failed"]),
        st.lists(_item, max_size=2),
    ),
    st.tuples(st.just("heartbeat"), st.sampled_from(_RUNS), st.integers(1, 2)),
    st.tuples(st.just("beat"), st.sampled_from(["me", "other"])),
)


def _one_create_per_run(ops: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Ops issued at once create a run id once: when two creations of one id share a group
    that conflicts, which refusal the first gets (``RUN_EXISTS`` or ``INTERRUPT_ANSWERED``,
    ``SqlRunStore._conflict``'s read) depends on whether the second was rerun before that
    read, on either path."""
    seen: set[str] = set()
    out = []
    for op in ops:
        if op[0] == "create":
            if op[1] in seen:
                continue
            seen.add(op[1])
        out.append(op)
    return out


# groups of ops issued at once (one group commit each, when they fit)
_plans = st.lists(
    st.lists(_op, min_size=1, max_size=6).map(_one_create_per_run), min_size=1, max_size=5
)


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1001)
        return self.now


async def _do(store: SqlRunStore, op: tuple[Any, ...], seqs: dict[str, int]) -> Any:
    kind = op[0]
    if kind == "create":
        _, run_id, thread_id, messages, answers, started = op
        events = [NewEvent(seq=1, event={"type": "RUN_STARTED", "runId": run_id})]
        return await store.create_run(
            run_id=run_id,
            thread_id=thread_id,
            owner="me",
            input_messages=messages,
            answers=[(interrupt_id, "resolved") for interrupt_id in answers],
            events=events if started else (),
        )
    if kind == "append":
        _, run_id, count, skew = op
        first = seqs.get(run_id, 0) + 1 + skew
        events = [
            NewEvent(seq=s, event={"type": "TEXT_MESSAGE_CONTENT", "delta": f"d{s}"})
            for s in range(max(1, first), max(1, first) + count)
        ]
        return await store.append_events(run_id, 1, events)
    if kind == "final":
        _, run_id, status, items = op
        seq = seqs.get(run_id, 0) + 1
        final = RunFinal(status=status, messages=items, usage={"tokens": seq})
        return await store.append_events(
            run_id, 1, [NewEvent(seq=seq, event={"type": "RUN_FINISHED"})], final=final
        )
    if kind == "heartbeat":
        _, run_id, epoch = op
        return await store.heartbeat(run_id, epoch)
    return await store.beat_replica(op[1])


def _outcome(result: Any) -> Any:
    if isinstance(result, BaseException):
        return (type(result).__name__, str(result))
    return result


async def _play(store: SqlRunStore, plan: list[list[tuple[Any, ...]]]) -> list[Any]:
    seqs: dict[str, int] = {}
    outcomes: list[Any] = []
    for ops in plan:
        results = await asyncio.gather(
            *(_do(store, op, seqs) for op in ops), return_exceptions=True
        )
        outcomes += [_outcome(r) for r in results]
        for r in results:
            if hasattr(r, "last_seq") and hasattr(r, "id"):
                seqs[r.id] = max(seqs.get(r.id, 0), r.last_seq)
    return outcomes


async def _tables(store: SqlRunStore) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    async with store.engine.connect() as conn:
        for table in metadata.sorted_tables:
            names = [c.name for c in table.columns]
            typed = ", ".join(f"{n}, typeof({n})" for n in names)
            order = ", ".join(c.name for c in table.primary_key.columns) or names[0]
            rows = await conn.exec_driver_sql(f"SELECT {typed} FROM {table.name} ORDER BY {order}")
            out[table.name] = [tuple(r) for r in rows]
    return out


async def _run_both(plan: list[list[tuple[Any, ...]]]) -> None:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for raw in (False, True):
            store = await open_store(
                f"sqlite+aiosqlite:///{Path(tmp) / f'{raw}.db'}", clock=_Clock()
            )
            assert store.group is not None
            store.group.raw_sqlite = raw
            try:
                outcomes = await _play(store, plan)
                results.append((outcomes, await _tables(store), store.group.raw_sqlite))
            finally:
                await store.close()
    (slow, slow_tables, _), (fast, fast_tables, still_raw) = results
    assert still_raw  # the raw path ran (it is off only where aiosqlite's internals are gone)
    assert fast == slow
    assert fast_tables == slow_tables


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=_plans)
def test_raw_groups_store_and_answer_what_sqlalchemy_groups_do(
    plan: list[list[tuple[Any, ...]]],
) -> None:
    asyncio.run(_run_both(plan))


def test_raw_groups_run_in_one_worker_call() -> None:
    """A group of creations, appends and a terminal append costs one aiosqlite worker call
    (on any of the pool's connections; the group writer's is held, so its checkout costs
    none), where SQLAlchemy makes one per statement."""
    import aiosqlite

    async def main(tmp: str) -> dict[bool, int]:
        calls: dict[bool, int] = {}
        for raw in (False, True):
            store = await open_store(f"sqlite+aiosqlite:///{tmp}/{raw}.db", clock=_Clock())
            assert store.group is not None
            store.group.raw_sqlite = raw
            await asyncio.gather(
                *(
                    store.create_run(
                        run_id=f"r{k}",
                        thread_id=f"t{k}",
                        owner="me",
                        input_messages=[{"id": f"m{k}", "role": "user"}],
                        events=[NewEvent(seq=1, event={"type": "RUN_STARTED"})],
                    )
                    for k in range(3)
                )
            )
            count = 0
            execute = aiosqlite.Connection._execute

            async def counted(
                self: Any, fn: Any, *args: Any, _execute: Any = execute, **kwargs: Any
            ) -> Any:
                nonlocal count
                count += 1
                return await _execute(self, fn, *args, **kwargs)

            aiosqlite.Connection._execute = counted  # type: ignore[method-assign]
            try:
                final = RunFinal(status="completed", messages=[{"id": "a", "role": "assistant"}])
                await asyncio.gather(
                    store.append_events("r0", 1, [NewEvent(seq=2, event={"type": "X"})]),
                    store.append_events("r1", 1, [NewEvent(seq=2, event={"type": "X"})]),
                    store.append_events(
                        "r2", 1, [NewEvent(seq=2, event={"type": "RUN_FINISHED"})], final=final
                    ),
                )
            finally:
                aiosqlite.Connection._execute = execute  # type: ignore[method-assign]
                await store.close()
            calls[raw] = count
        return calls

    with tempfile.TemporaryDirectory() as tmp:
        calls = asyncio.run(main(tmp))
    assert calls[True] == 1
    assert calls[False] >= 5  # BEGIN is implicit; 2 UPDATEs, INSERT events, history, COMMIT


def test_a_statement_the_raw_path_cannot_run_goes_through_sqlalchemy() -> None:
    """A column with a Python-side default needs SQLAlchemy's execution context: the raw
    connection refuses it before sending anything (the group then runs through SQLAlchemy)."""
    from gateway.store.sqlite_raw import RawUnsupported, _Prepared

    table = sa.Table("t", sa.MetaData(), sa.Column("a", sa.Integer, default=lambda: 1))
    dialect = sa.create_engine("sqlite://").dialect
    try:
        _Prepared(sa.insert(table), dialect, ())
    except RawUnsupported:
        return
    raise AssertionError("a Python-side default passed")


def test_a_group_the_raw_path_refuses_commits_through_sqlalchemy() -> None:
    """A group with a statement the raw connection refuses (a Python-side default) is rolled
    back there and committed through SQLAlchemy: its step's write is stored once, and the
    appends of the same group with it."""
    own_threads = sa.Table(
        "threads",
        sa.MetaData(),
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("next_position", sa.BigInteger, default=lambda: 7),
        sa.Column("created_at", sa.String),
        sa.Column("updated_at", sa.String),
    )

    async def step(conn: Any, now: datetime) -> str:
        stamp = now.isoformat()
        await conn.execute(
            sa.insert(own_threads), {"id": "t-own", "created_at": stamp, "updated_at": stamp}
        )
        return "done"

    async def main(tmp: str) -> tuple[Any, ...]:
        store = await open_store(f"sqlite+aiosqlite:///{tmp}/runs.db", clock=_Clock())
        assert store.group is not None
        try:
            await store.create_run(
                run_id="r",
                thread_id="t",
                owner="me",
                events=[NewEvent(seq=1, event={"type": "RUN_STARTED"})],
            )
            answer, record = await asyncio.gather(
                store.group.call(step),
                store.append_events("r", 1, [NewEvent(seq=2, event={"type": "X"})]),
            )
            tables = await _tables(store)
            return answer, record.last_seq, tables["threads"], len(tables["events"])
        finally:
            await store.close()

    with tempfile.TemporaryDirectory() as tmp:
        answer, last_seq, threads, events = asyncio.run(main(tmp))
    assert answer == "done"
    assert last_seq == 2
    assert events == 2
    assert [row[:4] for row in threads if row[0] == "t-own"] == [("t-own", "text", 7, "integer")]


def test_a_connection_already_in_a_transaction_is_refused_before_anything_is_sent() -> None:
    """An in-memory database's one connection may be inside another caller's transaction:
    the raw path sends nothing then (RawUnsupported; the group goes through SQLAlchemy)."""
    import sqlite3

    from gateway.store.sqlite_raw import RawUnsupported, run_transaction

    raw = sqlite3.connect(":memory:")
    raw.execute("CREATE TABLE t (a)")
    raw.execute("BEGIN")
    raw.execute("INSERT INTO t VALUES (1)")
    sent: list[str] = []

    async def body(conn: Any) -> None:
        sent.append("body")

    dialect = sa.create_engine("sqlite://").dialect
    try:
        run_transaction(raw, dialect, None, body)
    except RawUnsupported:
        pass
    else:
        raise AssertionError("ran inside another transaction")
    assert sent == []
    assert raw.in_transaction  # the other caller's transaction is left as it was
    raw.rollback()
