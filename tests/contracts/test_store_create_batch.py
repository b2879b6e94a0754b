"""A group's run creations written together (``gateway/store/create_sql.py``, issue 13) leave
the tables as the same creations one at a time do, on SQLite (the group's raw path) and on
PostgreSQL.

Hypothesis draws a burst of creations: new threads and threads that already have messages,
threads named by several creations, input whose items repeat each other or echo what the
thread holds (by id or by alias), creations without input and with first events. The burst
goes through ``create_run`` at once (one group: checked), and the reference store gets the
same creations one by one, in order; every row of ``threads``, ``messages``,
``message_aliases``, ``runs`` and ``events`` must be equal, and so must each caller's record.
A taken run id still fails its own creation only (``RunExistsError``), as one at a time.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.store import NewEvent, RunExistsError
from gateway.store.schema import events, message_aliases, messages, runs, threads

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends

from run_backends import STORES, looped_store

pytestmark = pytest.mark.timeout(600)

_THREADS = ["a", "b", "c", "d", "e", "f"]
_IDS = ["m1", "m2", "m3", "u1", "u2"]


@pytest.fixture(scope="module", params=STORES)
def stores(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[asyncio.AbstractEventLoop, Any, Any]]:
    """Two stores of one kind on one loop: the burst's and the reference's."""
    kind = request.param
    first = looped_store(kind, tmp_path_factory.mktemp(f"{kind}-burst"))
    loop, burst = next(first)
    second = looped_store(kind, tmp_path_factory.mktemp(f"{kind}-one-by-one"))
    loop2, reference = next(second)
    try:
        yield loop, burst, (loop2, reference)
    finally:
        for gen in (first, second):
            next(gen, None)


_item = st.fixed_dictionaries(
    {"id": st.sampled_from(_IDS), "role": st.sampled_from(["user", "assistant"])},
    optional={"aliases": st.lists(st.sampled_from(_IDS), max_size=2)},
).map(lambda item: {**item, "content": f"say {item['id']}"})

_creation = st.tuples(
    st.sampled_from(_THREADS),
    st.lists(_item, max_size=3),
    st.booleans(),  # with its announced RUN_STARTED
)


def _kwargs(prefix: str, n: int, thread: str, items: list[Any], first: bool) -> dict[str, Any]:
    run_id = f"{prefix}-r{n}"
    kwargs: dict[str, Any] = {
        "run_id": run_id,
        "thread_id": f"{prefix}-{thread}",
        "owner": "replica-1",
        "route": "gpt",
        "input_messages": items,
    }
    if first:
        started = {"type": "RUN_STARTED", "threadId": thread, "runId": run_id}
        kwargs["events"] = [NewEvent(1, started, durable=True)]
    return kwargs


async def _tables(store: Any, prefix: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the five tables whose thread or run belongs to ``prefix``, with the
    prefix taken out of the keys (two examples never share rows)."""
    cut = len(prefix) + 1
    out: dict[str, list[tuple[Any, ...]]] = {}
    async with store.engine.connect() as conn:
        for table, key in (
            (threads, threads.c.id),
            (messages, messages.c.thread_id),
            (message_aliases, message_aliases.c.thread_id),
            (runs, runs.c.thread_id),
            (events, events.c.run_id),
        ):
            rows = (await conn.execute(sa.select(table).where(key.startswith(prefix)))).all()
            out[table.name] = sorted(
                tuple(v[cut:] if isinstance(v, str) and v.startswith(prefix) else v for v in row)
                for row in rows
            )
    return out


def _record(record: Any, prefix: str) -> tuple[Any, ...]:
    return (
        record.id[len(prefix) + 1 :],
        record.thread_id[len(prefix) + 1 :],
        record.status,
        record.last_seq,
        record.stored_bytes,
    )


_EXAMPLES = [0]


@given(
    before=st.lists(st.tuples(st.sampled_from(_THREADS), st.lists(_item, min_size=1, max_size=2))),
    burst=st.lists(_creation, min_size=2, max_size=10),
)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_a_burst_of_creations_stores_what_one_at_a_time_stores(
    stores: Any, before: list[Any], burst: list[Any]
) -> None:
    loop, store, (loop2, reference) = stores
    _EXAMPLES[0] += 1
    prefix = f"x{_EXAMPLES[0]}"

    async def prepare(target: Any) -> None:
        for n, (thread, items) in enumerate(before):
            await target.create_run(**_kwargs(prefix, 1000 + n, thread, items, False))

    async def together() -> list[Any]:
        await prepare(store)
        groups = store.group.groups
        made = await asyncio.gather(
            *(store.create_run(**_kwargs(prefix, n, *c)) for n, c in enumerate(burst))
        )
        assert store.group.groups == groups + 1  # one group: the creations were together
        return [_record(r, prefix) for r in made]

    async def one_by_one() -> list[Any]:
        await prepare(reference)
        made = [await reference.create_run(**_kwargs(prefix, n, *c)) for n, c in enumerate(burst)]
        return [_record(r, prefix) for r in made]

    got = loop.run_until_complete(together())
    expected = loop2.run_until_complete(one_by_one())
    assert got == expected
    assert loop.run_until_complete(_tables(store, prefix)) == loop2.run_until_complete(
        _tables(reference, prefix)
    )


def test_a_taken_run_id_fails_its_own_creation_only(stores: Any) -> None:
    loop, store, _ = stores

    async def main() -> None:
        await store.create_run(**_kwargs("taken", 0, "a", [{"id": "u1", "role": "user"}], True))
        items = [{"id": "u2", "role": "user"}]
        outcomes = await asyncio.gather(
            *(store.create_run(**_kwargs("taken", n, "abc"[n], items, True)) for n in range(3)),
            return_exceptions=True,
        )
        assert isinstance(outcomes[0], RunExistsError)
        assert [o.public_run_id for o in outcomes[1:]] == ["taken-r1", "taken-r2"]

    loop.run_until_complete(main())
