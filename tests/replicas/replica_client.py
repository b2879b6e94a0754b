"""The HTTP client side of the replica tests and of ``bench/fault_trials.py``: create a run on a
replica (``POST /api/v1/agent/runs``), read its events (``GET .../events``, optionally after a
``Last-Event-ID``), and the run as stored (its record and every event, read from PostgreSQL
directly, not through a replica).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
from durable_support import Frame, frames, run_input
from replica_processes import PG_URL

from gateway.store import RunRecord, StoredEvent, open_store

__all__ = ["TERMINAL", "TIMEOUT", "StatusError", "create_run", "read_events", "stored"]

TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
TIMEOUT = httpx.Timeout(10.0, read=15.0)  # keep-alives come every second


class StatusError(AssertionError):
    """The events endpoint answered ``status`` (not 200), with ``body``."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"{status}: {body!r}")
        self.status = status
        self.body = body


def create_run(
    base: str, thread_id: str, run_id: str, content: str, *, route: str = "slow"
) -> None:
    """``POST {base}/api/v1/agent/runs`` with one user message ``content``; asserts the
    ``201 {threadId, runId}`` answer."""
    body = {"route": route, "input": run_input(thread_id, run_id, content)}
    reply = httpx.post(f"{base}/api/v1/agent/runs", json=body, timeout=TIMEOUT)
    assert reply.status_code == 201, reply.text
    assert reply.json() == {"threadId": thread_id, "runId": run_id}


def read_events(
    base: str,
    thread_id: str,
    run_id: str,
    *,
    after: str | None = None,
    via_header: bool = True,
    stop_at: int | None = None,
    on_frame: Callable[[Frame], Any] | None = None,
) -> list[Frame]:
    """Read the run's events from ``base``; with ``stop_at`` close the connection as soon as
    that many events arrived (any partial frame after them is lost, as in a real drop).

    ``after`` goes in the ``Last-Event-ID`` header (``via_header``) or the ``lastEventId``
    query. ``on_frame`` sees every event frame as it arrives (a caller that expects the
    connection to break keeps its own list there: an ``httpx.HTTPError`` propagates). Any
    other answer than ``200`` raises :class:`StatusError`."""
    params = {"runId": run_id}
    headers = {}
    if after is not None:
        if via_header:
            headers["last-event-id"] = after
        else:
            params["lastEventId"] = after
    got: list[Frame] = []
    url = f"{base}/api/v1/agent/runs/{thread_id}/events"
    with httpx.stream("GET", url, params=params, headers=headers, timeout=TIMEOUT) as response:
        if response.status_code != 200:
            raise StatusError(response.status_code, response.read())
        buffer = b""
        for chunk in response.iter_raw():
            buffer += chunk
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                for frame in frames(block + b"\n\n"):
                    if isinstance(frame.data, dict):
                        got.append(frame)
                        if on_frame is not None:
                            on_frame(frame)
                if stop_at is not None and len(got) >= stop_at:
                    return got
    return got


async def _stored(schema: str, run_id: str) -> tuple[RunRecord, list[StoredEvent]]:
    store = await open_store(PG_URL, schema=schema, migrate=False)
    try:
        # the record first: a run closed (status and terminal event in one transaction) is
        # then read with its terminal event, even while a reaper is closing it
        record = await store.get_run(run_id)
        events: list[StoredEvent] = []
        while True:
            page = await store.read_events(run_id, after=events[-1].cursor if events else None)
            events += page
            if len(page) < 500:
                return record, events
    finally:
        await store.close()


def stored(schema: str, run_id: str) -> tuple[RunRecord, list[StoredEvent]]:
    """The run's record and all its stored events (``run_id`` is the store key,
    ``gateway.tenancy.run_key``)."""
    return asyncio.run(_stored(schema, run_id))
