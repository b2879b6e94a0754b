"""Hand-picked bursts of run creations (``gateway/store/create_sql.py`` ``NewRun.batch`` via
``GroupCommitter._batch_steps``) and SQLite's multi-row INSERTs (``sqlite_raw._at_once``), from
a fresh reviewer's attack: one runId twice in a burst, a taken runId on a thread with
messages, input echoing itself by alias across new and old threads, every metadata column,
input crossing the multi-row chunk sizes, interrupt answers. Each case runs a burst in one
group and the same creations one at a time on a second store, then compares every row (as
``test_store_create_batch.py`` does) and each caller's outcome."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.store import NewEvent

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends

from run_backends import STORES, looped_store
from test_store_create_batch import _record, _tables

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module", params=STORES)
def stores(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[asyncio.AbstractEventLoop, Any, Any]]:
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


_N = [0]


def _outcome(result: Any, prefix: str) -> Any:
    if isinstance(result, BaseException):
        return type(result).__name__
    return _record(result, prefix)


def _compare(stores: Any, before: list[dict[str, Any]], burst_of: Any) -> None:
    """``before`` created one at a time on both stores; then ``burst_of(prefix)`` (kwargs
    list) as one gather on the burst store (one group) and in order on the reference."""
    loop, store, (loop2, reference) = stores
    _N[0] += 1
    prefix = f"z{_N[0]}"

    def fix(kwargs: dict[str, Any]) -> dict[str, Any]:
        out = dict(kwargs)
        out["run_id"] = f"{prefix}-{kwargs['run_id']}"
        out["thread_id"] = f"{prefix}-{kwargs['thread_id']}"
        return out

    burst = [fix(k) for k in burst_of]

    async def prepare(target: Any) -> None:
        for kwargs in before:
            await target.create_run(**fix(kwargs))

    async def together() -> tuple[list[Any], int]:
        await prepare(store)
        groups = store.group.groups
        made = await asyncio.gather(*(store.create_run(**k) for k in burst), return_exceptions=True)
        groups_used = store.group.groups - groups
        return [_outcome(r, prefix) for r in made], groups_used

    async def one_by_one() -> list[Any]:
        await prepare(reference)
        out = []
        for k in burst:
            try:
                out.append(await reference.create_run(**k))
            except Exception as exc:
                out.append(exc)
        return [_outcome(r, prefix) for r in out]

    (got, _groups) = loop.run_until_complete(together())
    expected = loop2.run_until_complete(one_by_one())
    assert got == expected
    assert loop.run_until_complete(_tables(store, prefix)) == loop2.run_until_complete(
        _tables(reference, prefix)
    )


def _started(thread: str, run: str) -> list[NewEvent]:
    return [NewEvent(1, {"type": "RUN_STARTED", "threadId": thread, "runId": run}, durable=True)]


def _b(run: str, thread: str, items: list[Any], first: bool = True, **more: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "run_id": run,
        "thread_id": thread,
        "owner": "replica-1",
        "route": "gpt",
        "input_messages": items,
        **more,
    }
    if first:
        kwargs["events"] = _started(thread, run)
    return kwargs


def _u(mid: str, *aliases: str, role: str = "user") -> dict[str, Any]:
    item: dict[str, Any] = {"id": mid, "role": role, "content": f"say {mid}"}
    if aliases:
        item["aliases"] = list(aliases)
    return item


def test_one_run_id_twice_in_a_burst_on_two_new_threads(stores: Any) -> None:
    _compare(
        stores,
        [],
        [_b("r1", "a", [_u("m1")]), _b("r1", "b", [_u("m2")]), _b("r2", "c", [_u("m3")])],
    )


def test_a_taken_run_id_on_a_thread_with_messages_in_a_burst(stores: Any) -> None:
    _compare(
        stores,
        [_b("r0", "a", [_u("m1", "x1")], first=False)],
        [
            _b("r0", "a", [_u("m1"), _u("m2", "x1")]),  # taken id, echoing and aliasing
            _b("r1", "b", [_u("m1"), _u("m1")]),
            _b("r2", "c", [_u("m9", "m8"), _u("m8")]),
        ],
    )


def test_items_echoing_each_other_by_alias_across_new_and_old_threads(stores: Any) -> None:
    _compare(
        stores,
        [_b("r0", "a", [_u("m1", "x1", "x2")], first=False)],
        [
            _b("r1", "a", [_u("x2"), _u("m3", "m1"), _u("m4", "x3"), _u("x3")]),
            _b("r2", "b", [_u("m1", "m2"), _u("m2", "m1"), _u("m5", "m5")]),
            _b("r3", "c", [_u("m1", role="assistant"), _u("m1")]),
            _b("r4", "d", []),
        ],
    )


def test_a_burst_with_metadata_columns_and_continues(stores: Any) -> None:
    _compare(
        stores,
        [],
        [
            _b(
                "r1",
                "a",
                [_u("m1")],
                tenant="acme",
                model="gpt-x",
                message_id="msg-1",
                upstream="https://u.test",
                continues=["call-1", "call-2"],
            ),
            _b("r2", "b", [_u("m2")], tenant=None, continues=[]),
            _b("r3", "c", [_u("m3")], first=False, status="running"),
        ],
    )


def test_a_large_input_burst_crosses_the_multi_row_chunks(stores: Any) -> None:
    big = [_u(f"m{i}", f"a{i}") for i in range(1500)]
    _compare(
        stores,
        [],
        [_b("r1", "a", big), _b("r2", "b", big[:700] + big[:3]), _b("r3", "c", [_u("z")])],
    )


def test_answers_in_a_burst_claimed_once(stores: Any) -> None:
    _compare(
        stores,
        [],
        [
            _b("r1", "a", [_u("m1")], answers=[("i1", "resolved")]),
            _b("r2", "b", [_u("m2")]),
            _b("r3", "c", [_u("m3")]),
            _b("r4", "a", [_u("m4")], answers=[("i1", "resolved")]),
        ],
    )
