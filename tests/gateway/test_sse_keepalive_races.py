"""SSEResponse's keep-alives against hostile timings: slow and failing keep-alive writes while
the source produces or waits, a disconnect or a shutdown in the same turn.

What a real ASGI server relies on (ASGI HTTP spec, "Response Body"): no two sends overlap,
body chunks in the source's order, each once; nothing after ``more_body: False``; under spec
< 2.4 a send after a disconnect is a no-op, under >= 2.4 it raises ``OSError``. A
cancellation from elsewhere (server shutdown, a timeout around the app) propagates as
``CancelledError``; no task is left behind; a started source is closed."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sse_harness import Held, Recorder, never, scope
from starlette.requests import ClientDisconnect

from gateway.sse_response import KEEPALIVE, SSEResponse


@settings(max_examples=30, deadline=None)
@given(
    gaps=st.lists(st.sampled_from([0.0, 0.002, 0.006]), min_size=1, max_size=12),
    keepalive_block=st.sampled_from([0.0, 0.003, 0.01]),
    spec=st.sampled_from(["2.3", "2.4"]),
)
def test_slow_keepalive_writes_never_overlap_lose_or_reorder_chunks(
    gaps: list[float], keepalive_block: float, spec: str
) -> None:
    """A client slow to take the keep-alives (their send blocks) while the source produces:
    every chunk once, in order, no two sends at once, the end last."""

    async def main() -> None:
        rec = Recorder()
        closed = False

        async def source() -> AsyncIterator[bytes]:
            nonlocal closed
            try:
                for i, gap in enumerate(gaps):
                    await asyncio.sleep(gap)
                    yield f"data: {i}\n\n".encode()
            finally:
                closed = True

        async def send(message: dict[str, Any]) -> None:
            await rec.enter(message)
            try:
                if message.get("body") == KEEPALIVE:
                    await asyncio.sleep(keepalive_block)
                else:
                    await asyncio.sleep(0)
            finally:
                rec.leave()

        before = asyncio.all_tasks()
        response = SSEResponse(source(), keepalive_seconds=0.001)
        await asyncio.wait_for(response(scope(spec), never, send), timeout=10)
        await asyncio.sleep(0)
        assert asyncio.all_tasks() - before == set()
        assert closed
        assert rec.overlaps == 0 and rec.after_end == 0
        bodies = rec.bodies()
        assert bodies[-1] == b"" and rec.ended
        data = [b for b in bodies[:-1] if b != KEEPALIVE]
        assert data == [f"data: {i}\n\n".encode() for i in range(len(gaps))]

    asyncio.run(main())


@pytest.mark.parametrize("spec", ["2.3", "2.4"])
@pytest.mark.parametrize("first", ["fail", "cancel"])
async def test_shutdown_racing_a_failing_keepalive_propagates_as_cancellation(
    spec: str, first: str
) -> None:
    """A cancellation from elsewhere (server shutdown, a timeout around the app) in the same
    loop turn as a keep-alive's write failing: the task was cancelled by someone else, so it
    must end with ``CancelledError`` (asyncio's contract: ``asyncio.timeout`` turns only that
    into ``TimeoutError``), not with the keep-alive's error in its place."""
    keepalive_sent = asyncio.Event()
    write_done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    closed = False

    async def source() -> AsyncIterator[bytes]:
        nonlocal closed
        try:
            await asyncio.Event().wait()
            yield b"data: never\n\n"
        finally:
            closed = True

    async def send(message: dict[str, Any]) -> None:
        if message.get("body") == KEEPALIVE:
            keepalive_sent.set()
            await write_done

    before = asyncio.all_tasks()
    response = SSEResponse(source(), keepalive_seconds=0.01)
    task = asyncio.create_task(response(scope(spec), never, send))
    await keepalive_sent.wait()
    if first == "fail":
        write_done.set_exception(OSError("connection reset"))
        task.cancel()
    else:
        task.cancel()
        write_done.set_exception(OSError("connection reset"))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()


@pytest.mark.parametrize("spec", ["2.3", "2.4"])
async def test_failing_keepalive_while_source_waits_ends_the_response(spec: str) -> None:
    rec = Recorder()
    held = Held()

    async def send(message: dict[str, Any]) -> None:
        await rec.enter(message)
        rec.leave()
        if message.get("body") == KEEPALIVE:
            raise OSError("connection reset")

    before = asyncio.all_tasks()
    response = SSEResponse(held.chunks(), keepalive_seconds=0.005)
    expected = ClientDisconnect if spec == "2.4" else OSError
    with pytest.raises(expected):
        await asyncio.wait_for(response(scope(spec), never, send), timeout=5)
    assert held.closed
    assert rec.bodies() == [b"data: 0\n\n", KEEPALIVE]
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()


async def test_disconnect_during_a_keepalive_send_ends_normally() -> None:
    rec = Recorder()
    gone = asyncio.Event()
    held = Held()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        await rec.enter(message)
        try:
            if message.get("body") == KEEPALIVE:
                gone.set()
                await asyncio.sleep(0.05)  # the client is gone mid-write
        finally:
            rec.leave()

    before = asyncio.all_tasks()
    response = SSEResponse(held.chunks(), keepalive_seconds=0.005)
    await asyncio.wait_for(response(scope("2.3"), receive, send), timeout=5)
    assert held.closed
    assert rec.overlaps == 0 and rec.after_end == 0
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()


async def test_tiny_keepalive_only_after_a_whole_silence() -> None:
    """keepalive 1 ms, a fast source with random pauses: a keep-alive only after a whole
    interval with nothing sent (measured from the end of the previous write)."""
    loop = asyncio.get_running_loop()
    interval = 0.001
    times: list[tuple[float, float, bytes]] = []

    async def source() -> AsyncIterator[bytes]:
        for i in range(200):
            if i % 7 == 0:
                await asyncio.sleep(0.003)
            elif i % 3 == 0:
                await asyncio.sleep(0)
            yield f"data: {i}\n\n".encode()

    async def send(message: dict[str, Any]) -> None:
        start = loop.time()
        if message.get("body") == KEEPALIVE:
            await asyncio.sleep(0.0005)
        times.append((start, loop.time(), message.get("body", b"")))

    await SSEResponse(source(), keepalive_seconds=interval)(scope("2.4"), never, send)
    bodies = [b for _, _, b in times]
    assert [b for b in bodies[1:-1] if b != KEEPALIVE] == [
        f"data: {i}\n\n".encode() for i in range(200)
    ]
    for (_, prev_end, _), (start, _, body) in itertools.pairwise(times):
        if body == KEEPALIVE:
            assert start - prev_end >= interval - 1e-9
        assert start >= prev_end  # one write at a time


@pytest.mark.parametrize("spec", ["2.3", "2.4"])
async def test_a_keepalive_failing_while_a_chunk_waits_behind_it(spec: str) -> None:
    """The source has its next chunk while a keep-alive's write blocks, then that write
    fails: the chunk is not sent (nothing after a failed write), the failure ends the
    response, the source is closed, no task is left behind."""
    rec = Recorder()
    blocked = asyncio.Event()
    release: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    closed = False

    async def source() -> AsyncIterator[bytes]:
        nonlocal closed
        try:
            yield b"data: 0\n\n"
            await blocked.wait()
            yield b"data: 1\n\n"  # ready while the keep-alive is still being written
            yield b"data: 2\n\n"
        finally:
            closed = True

    async def send(message: dict[str, Any]) -> None:
        await rec.enter(message)
        try:
            if message.get("body") == KEEPALIVE:
                blocked.set()
                await release
        finally:
            rec.leave()

    before = asyncio.all_tasks()
    task = asyncio.create_task(
        SSEResponse(source(), keepalive_seconds=0.005)(scope(spec), never, send)
    )
    await blocked.wait()
    for _ in range(5):
        await asyncio.sleep(0)  # the response takes chunk 1 and waits for the keep-alive
    release.set_exception(OSError("connection reset"))
    with pytest.raises(ClientDisconnect if spec == "2.4" else OSError):
        await task
    assert closed
    assert rec.bodies() == [b"data: 0\n\n", KEEPALIVE]
    assert rec.overlaps == 0
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()


@settings(max_examples=60, deadline=None)
@given(
    spec=st.sampled_from(["2.3", "2.4"]),
    events=st.lists(
        st.tuples(st.sampled_from(["fail", "shutdown", "disconnect"]), st.integers(0, 2)),
        min_size=1,
        max_size=3,
        unique_by=lambda e: e[0],
    ),
)
def test_keepalive_failure_disconnect_and_shutdown_in_any_order(
    spec: str, events: list[tuple[str, int]]
) -> None:
    """While a keep-alive is being written: its write failing, the client leaving (spec 2.3)
    and a shutdown, in any order, some in the same turn. A shutdown propagates as
    ``CancelledError``; else a disconnect ends the response normally (2.3); else the failure
    ends it with its error. The source is closed, no task left behind."""

    async def main() -> None:
        keepalive_sent = asyncio.Event()
        release: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        gone = asyncio.Event()
        held = Held()

        async def receive() -> dict[str, Any]:
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message.get("body") == KEEPALIVE:
                keepalive_sent.set()
                await release

        before = asyncio.all_tasks()
        task = asyncio.create_task(
            SSEResponse(held.chunks(), keepalive_seconds=0.005)(scope(spec), receive, send)
        )
        await keepalive_sent.wait()
        kinds = set()
        for kind, turns in events:
            for _ in range(turns):
                await asyncio.sleep(0)
            if task.done():
                break
            kinds.add(kind)
            if kind == "fail":
                release.set_exception(OSError("connection reset"))
            elif kind == "shutdown":
                task.cancel()
            else:
                gone.set()
        for _ in range(3):
            await asyncio.sleep(0)
        if not task.done() and not ("disconnect" in kinds and spec == "2.3"):
            kinds.add("shutdown")  # nothing ends it under 2.4 but a failure: end the test
            task.cancel()
        try:
            await asyncio.wait_for(task, timeout=5)
            outcome = "normal"
        except asyncio.CancelledError:
            outcome = "cancelled"
        except (OSError, ClientDisconnect):
            outcome = "error"
        assert held.closed
        await asyncio.sleep(0)
        assert asyncio.all_tasks() - before == set()
        if "shutdown" in kinds:
            assert outcome == "cancelled"
        elif "disconnect" in kinds and spec == "2.3":
            # the keep-alive's failure may end it first (its error) or the disconnect
            assert outcome in {"normal", "error"}
            if "fail" not in kinds:
                assert outcome == "normal"
        elif "fail" in kinds:
            assert outcome == "error"
        if not release.done():
            release.cancel()

    asyncio.run(main())
