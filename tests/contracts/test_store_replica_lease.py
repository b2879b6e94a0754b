"""Per-replica leases and runs created with their first events (issue 13 items 2 and 5),
run over SQLite and PostgreSQL (``docs/runs.md`` §2, §4).

The lease rule the reaper relies on: an active run is stale exactly when its own heartbeat
and its owner replica's heartbeat (when the replica has a row) are both older than the cutoff;
``list_stale_runs`` and ``take_over`` agree on it. The hypothesis test draws runs, replicas
and heartbeat times and compares the store against that rule.
"""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_backends import ManualClock

from gateway.store import (
    Cursor,
    NewEvent,
    ReplicaDigest,
    RunExistsError,
    SequenceError,
    SqlRunStore,
)

pytestmark = pytest.mark.timeout(120)

_IDS = itertools.count()

STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}


async def test_create_run_with_first_events_stores_them_in_the_same_commit(
    store: SqlRunStore,
) -> None:
    assert store.group is not None
    before = store.group.groups
    run = await store.create_run(
        run_id="r", thread_id="t", owner="a", events=[NewEvent(1, STARTED, durable=True)]
    )
    assert store.group.groups == before + 1  # one transaction for the run row and its event
    assert (run.status, run.last_seq, run.last_epoch, run.last_cursor) == (
        "running",
        1,
        1,
        Cursor(1, 1),
    )
    assert run.stored_bytes > 0
    stored = await store.read_events("r")
    assert [(e.cursor, e.event, e.durable) for e in stored] == [(Cursor(1, 1), STARTED, True)]
    # the producer continues after it, as after any append
    nxt = await store.append_events("r", 1, [NewEvent(2, {"type": "STEP_STARTED"}, durable=True)])
    assert nxt.last_seq == 2


async def test_create_run_with_events_is_all_or_nothing(store: SqlRunStore) -> None:
    await store.create_run(run_id="r", thread_id="t", owner="a")
    with pytest.raises(RunExistsError):
        await store.create_run(
            run_id="r", thread_id="t", owner="b", events=[NewEvent(1, STARTED, durable=True)]
        )
    assert await store.read_events("r") == []
    assert (await store.get_run("r")).lease_owner == "a"
    with pytest.raises(SequenceError):
        await store.create_run(
            run_id="s", thread_id="t", owner="a", events=[NewEvent(2, STARTED, durable=True)]
        )


async def test_replica_heartbeat_reports_its_active_runs(
    store: SqlRunStore, clock: ManualClock
) -> None:
    a = await store.create_run(run_id="a", thread_id="t", owner="rep-1")
    await store.create_run(run_id="b", thread_id="t", owner="rep-2")
    owned = await store.heartbeat_replica("rep-1")
    assert [(o.run_id, o.epoch, o.cancel_requested) for o in owned] == [("a", 1, False)]
    await store.request_cancel(a.id)
    assert [o.cancel_requested for o in await store.heartbeat_replica("rep-1")] == [True]
    # the replica's lease keeps the run although the run's own heartbeat is old
    clock.advance(30)
    await store.heartbeat_replica("rep-1")
    cutoff = clock.now - timedelta(seconds=10)
    assert [r.id for r in await store.list_stale_runs(cutoff)] == ["b"]
    assert await store.take_over("a", owner="x", expected_epoch=1, stale_before=cutoff) is None
    # once the replica's lease expires too, the run is taken over and leaves its list
    clock.advance(30)
    cutoff = clock.now - timedelta(seconds=10)
    assert {r.id for r in await store.list_stale_runs(cutoff)} == {"a", "b"}
    taken = await store.take_over("a", owner="x", expected_epoch=1, stale_before=cutoff)
    assert taken is not None and taken.epoch == 2
    assert await store.heartbeat_replica("rep-1") == []
    # a dropped replica's runs are judged by their own heartbeat
    await store.heartbeat_replica("rep-2")
    assert [r.id for r in await store.list_stale_runs(cutoff)] == []
    await store.drop_replica("rep-2")
    assert [r.id for r in await store.list_stale_runs(cutoff)] == ["b"]


_AGE = st.integers(min_value=0, max_value=20)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    runs=st.lists(st.tuples(_AGE, st.integers(0, 2)), min_size=1, max_size=6),
    replicas=st.lists(st.one_of(st.none(), _AGE), min_size=3, max_size=3),
    cutoff=_AGE,
)
async def test_stale_iff_run_and_replica_heartbeats_are_both_old(
    store: SqlRunStore,
    clock: ManualClock,
    runs: list[tuple[int, int]],
    replicas: list[int | None],
    cutoff: int,
) -> None:
    """Times are seconds after a base; a replica of age None never beat (no row)."""
    tag = f"x{next(_IDS)}"
    base = clock.now
    owners = [f"{tag}-rep{i}" for i in range(3)]
    expected: set[str] = set()
    for index, (own, owner) in enumerate(runs):
        clock.now = base + timedelta(seconds=own)
        run_id = f"{tag}-run{index}"
        await store.create_run(run_id=run_id, thread_id=tag, owner=owners[owner])
        beat = replicas[owner]
        if own < cutoff and (beat is None or beat < cutoff):
            expected.add(run_id)
    for owner, beat in zip(owners, replicas, strict=True):
        if beat is not None:
            clock.now = base + timedelta(seconds=beat)
            await store.heartbeat_replica(owner)
    clock.now = base + timedelta(seconds=40)
    stale_before = base + timedelta(seconds=cutoff)
    listed = {r.id for r in await store.list_stale_runs(stale_before, limit=10_000)}
    assert {r for r in listed if r.startswith(f"{tag}-")} == expected
    taken: set[str] = set()
    for index in range(len(runs)):
        run_id = f"{tag}-run{index}"
        record: Any = await store.take_over(
            run_id, owner="reaper", expected_epoch=1, stale_before=stale_before
        )
        if record is not None:
            taken.add(run_id)
    assert taken == expected
    clock.now = base + timedelta(seconds=100)  # later examples start after this one


_FATE = st.sampled_from(["kept", "cancelled", "taken", "unknown"])


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(fates=st.lists(_FATE, max_size=7), ghosts=st.lists(st.integers(1, 3), max_size=2))
async def test_a_beat_answers_only_what_changed_when_the_replica_knows_its_runs(
    store: SqlRunStore, clock: ManualClock, fates: list[str], ghosts: list[int]
) -> None:
    """Issue 13 item 5.5. The replica's belief: every run it created except the ``unknown``
    ones (created, not yet registered locally), all at epoch 1, plus ``ghosts`` (runs it still
    pumps that the store no longer has as its own, at those epochs). A belief equal to the
    store's (same count and epoch sum) gets only the cancelled runs; any other gets every
    active run of the replica, as ``heartbeat_replica`` lists them."""
    tag = f"d{next(_IDS)}"
    owner = f"{tag}-rep"
    cancelled: set[str] = set()
    active: set[str] = set()
    believed = sum(e for e in ghosts)  # epochs of the runs the replica believes it holds
    believed_runs = len(ghosts)
    for index, fate in enumerate(fates):
        run_id = f"{tag}-run{index}"
        await store.create_run(run_id=run_id, thread_id=tag, owner=owner)
        if fate != "unknown":
            believed, believed_runs = believed + 1, believed_runs + 1
        if fate == "taken":
            later = clock.now + timedelta(seconds=1)
            assert await store.take_over(
                run_id, owner="other", expected_epoch=1, stale_before=later
            )
            continue
        active.add(run_id)
        if fate == "cancelled":
            await store.request_cancel(run_id)
            cancelled.add(run_id)
    matches = (believed_runs, believed) == (len(active), len(active))
    beat = await store.beat_replica(owner, known=ReplicaDigest(believed_runs, believed))
    assert beat.complete == (not matches)
    got = {(o.run_id, o.epoch, o.cancel_requested) for o in beat.runs}
    listed = active if beat.complete else cancelled
    assert got == {(r, 1, r in cancelled) for r in listed}
    full = await store.beat_replica(owner)  # no belief: the whole list
    assert full.complete and {o.run_id for o in full.runs} == active
    assert {o.run_id for o in await store.heartbeat_replica(owner)} == active
    clock.advance(100)  # later examples start after this one
