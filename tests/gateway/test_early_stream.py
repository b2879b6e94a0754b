"""``gateway/early_stream.py``: a stream whose first step runs at once, in a task of its own.

What the run's pump relies on: iterating the early stream gives exactly the source's items
(the first one, or the error the first step raised, included), its first step is under way
before anyone iterates, a cancel of the reader cancels that step (as it would the source's
own pending step), and ``aclose``
ends the step (if still waiting) and runs the source's cleanup. Hypothesis varies where the
source fails and when the reader starts or stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.early_stream import start_early


class Source:
    """An async generator of ``items`` that records what ran; ``hold`` gates its first item."""

    def __init__(self, items: list[int], fail_at: int | None = None) -> None:
        self.items, self.fail_at = items, fail_at
        self.started = False
        self.cleaned = False
        self.hold = asyncio.Event()
        self.hold.set()

    async def run(self) -> AsyncGenerator[int, None]:
        self.started = True
        try:
            await self.hold.wait()
            for index, item in enumerate(self.items):
                if index == self.fail_at:
                    raise ValueError(f"failed at {index}")
                yield item
            if self.fail_at == len(self.items):
                raise ValueError("failed at the end")
        finally:
            self.cleaned = True


async def _drain(stream: object) -> list[int]:
    return [item async for item in stream]  # type: ignore[attr-defined]


async def test_the_first_step_starts_before_anyone_reads() -> None:
    source = Source([1, 2])
    source.hold.clear()
    stream = start_early(source.run())
    await asyncio.sleep(0)
    assert source.started  # the request would be on its way
    source.hold.set()
    assert await _drain(stream) == [1, 2]
    assert source.cleaned


@given(
    items=st.lists(st.integers(), max_size=6),
    fail=st.one_of(st.none(), st.integers(min_value=0, max_value=6)),
    turns=st.integers(min_value=0, max_value=3),
)
@settings(max_examples=60, deadline=None)
def test_the_early_stream_yields_what_the_source_yields(
    items: list[int], fail: int | None, turns: int
) -> None:
    async def main() -> None:
        fail_at = None if fail is None else min(fail, len(items))

        async def plain() -> tuple[list[int], str | None]:
            got: list[int] = []
            try:
                async for item in Source(items, fail_at).run():
                    got.append(item)
            except ValueError as exc:
                return got, str(exc)
            return got, None

        expected = await plain()
        source = Source(items, fail_at)
        stream = start_early(source.run())
        for _ in range(turns):  # the reader comes later or at once
            await asyncio.sleep(0)
        got: list[int] = []
        error = None
        try:
            async for item in stream:
                got.append(item)
        except ValueError as exc:
            error = str(exc)
        assert (got, error) == expected
        await stream.aclose()
        assert source.cleaned

    asyncio.run(main())


async def test_aclose_during_the_first_step_ends_it_and_cleans_up() -> None:
    source = Source([1])
    source.hold.clear()  # the upstream has not answered yet
    stream = start_early(source.run())
    await asyncio.sleep(0)
    await asyncio.wait_for(stream.aclose(), 2)
    assert source.cleaned
    with pytest.raises(StopAsyncIteration):
        await stream.__anext__()


async def test_aclose_after_the_first_item_closes_the_source() -> None:
    source = Source([1, 2, 3])
    stream = start_early(source.run())
    assert await stream.__anext__() == 1
    await stream.aclose()
    assert source.cleaned


async def test_aclose_of_a_first_step_that_failed_retrieves_its_error() -> None:
    source = Source([1], fail_at=0)
    stream = start_early(source.run())
    for _ in range(3):
        await asyncio.sleep(0)
    await stream.aclose()  # nobody read it: no "exception was never retrieved" at exit
    assert source.cleaned


async def test_a_cancelled_reader_cancels_the_first_step_as_it_would_the_sources() -> None:
    source = Source([7, 8])
    source.hold.clear()
    stream = start_early(source.run())
    reader = asyncio.create_task(stream.__anext__())
    await asyncio.sleep(0)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert source.cleaned  # the upstream wait ended, its cleanup ran (the pump's feeder case)
    with pytest.raises(StopAsyncIteration):
        await stream.__anext__()
    await stream.aclose()


class SlowCleanup:
    """A source whose first step waits for the upstream and whose cleanup takes a while (an
    upstream response whose close awaits the network)."""

    def __init__(self) -> None:
        self.hold = asyncio.Event()
        self.cleaning = asyncio.Event()
        self.cleaned = False

    async def run(self) -> AsyncGenerator[int, None]:
        try:
            await self.hold.wait()
            yield 1
            yield 2
        finally:
            self.cleaning.set()
            await asyncio.sleep(0.2)
            self.cleaned = True


async def test_a_cancel_of_the_closer_during_aclose_is_not_swallowed() -> None:
    """``aclose`` waits for the cancelled first step under ``suppress(BaseException)``: a
    cancel of the task calling ``aclose`` (start_run's task on shutdown, or the pump's task
    cancelled by ``RunManager.aclose`` after its timeout) must still end that task with
    CancelledError, not be swallowed (nor turn into another error)."""
    source = SlowCleanup()
    stream = start_early(source.run())
    await asyncio.sleep(0)
    closer = asyncio.create_task(stream.aclose())
    await asyncio.wait_for(source.cleaning.wait(), 2)  # the first step is cleaning up
    closer.cancel()
    outcome: BaseException | None = None
    try:
        await closer
    except BaseException as exc:
        outcome = exc
    await asyncio.sleep(0.3)
    assert isinstance(outcome, asyncio.CancelledError), repr(outcome)


async def test_start_run_style_close_keeps_the_original_error() -> None:
    """What ``Services.start_run`` does when the create fails: ``await source.aclose()`` then
    ``raise``. Cancelled meanwhile, it must end with the create's error or CancelledError,
    never with an error of the close (a wrong code to the client)."""
    source = SlowCleanup()
    stream = start_early(source.run())
    await asyncio.sleep(0)

    async def start_run() -> None:
        try:
            raise LookupError("the create failed (RUN_EXISTS)")
        except BaseException:
            await stream.aclose()
            raise

    task = asyncio.create_task(start_run())
    await asyncio.wait_for(source.cleaning.wait(), 2)
    task.cancel()
    outcome: BaseException | None = None
    try:
        await task
    except BaseException as exc:
        outcome = exc
    await asyncio.sleep(0.3)
    assert isinstance(outcome, (LookupError, asyncio.CancelledError)), repr(outcome)


async def test_an_early_stream_over_a_capped_source_closed_unread_closes_the_upstream() -> None:
    """``Services.start_run`` puts the quota cap (``gateway/quota.py`` ``capped``) inside the
    early stream: closed before anyone read it (a pump stopped before its feeder ran), the
    first step ends and the upstream is closed (an early stream has sent its request; a
    ``capped`` generator wrapped around it would not have closed it, never started)."""
    from gateway.quota import capped

    source = SlowCleanup()
    stream = start_early(capped(source.run(), 10_000))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    await stream.aclose()
    await asyncio.sleep(0.4)
    assert source.cleaned, "the early first step still waits for the upstream"
