"""Reaper: closes the runs whose producer died (issue 3 §7, ``docs/runs.md`` §4, §6).

Any live replica may run it. For each queued/running run whose heartbeat is older than
``lease_timeout`` it takes the lease with a new epoch (a conditional UPDATE: one replica wins),
replays the run's durable events through a :class:`~agui_codecs.core.RunFold`, and appends in
the new epoch, after the durable end: the events closing what is open and RUN_ERROR
``{code: "RUN_INTERRUPTED"}`` (``RUN_CANCELED`` when a cancel had been requested), with the run
status, in one transaction, then publishes them, so every reader ends. Events the dead
producer published but never wrote are superseded: the new epoch's cursors sort after them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from agui_codecs.core import RunFold

from ..broker.protocol import Broker
from ..store.errors import RunStoreError, WriteRejectedError
from ..store.models import RunRecord
from ..store.protocol import RunStore
from .pump import CANCELED_MESSAGE, INTERRUPTED_MESSAGE
from .settings import RunSettings
from .writer import RunWriter

__all__ = ["Reaper"]

_log = logging.getLogger(__name__)


class Reaper:
    """Periodic takeover of stale runs (see the module docstring).

    Args:
        store, broker: shared with the pumps.
        owner: this replica's id (recorded as the new lease owner).
        settings: ``lease_timeout``, ``reaper_interval``, ``read_page_size``.
    """

    def __init__(
        self,
        store: RunStore,
        broker: Broker,
        *,
        owner: str,
        settings: RunSettings | None = None,
    ) -> None:
        self.store = store
        self.broker = broker
        self.owner = owner
        self.settings = settings or RunSettings()

    async def reap_once(self) -> list[str]:
        """Close every stale run this replica manages to take over; returns their ids."""
        stale_before = self.store.now() - timedelta(seconds=self.settings.lease_timeout)
        closed: list[str] = []
        for run in await self.store.list_stale_runs(stale_before):
            taken = await self.store.take_over(
                run.id, owner=self.owner, expected_epoch=run.epoch, stale_before=stale_before
            )
            if taken is None:
                continue
            try:
                await self.close_run(taken)
            except WriteRejectedError as exc:  # a later takeover or the producer won
                _log.info("reaper: run %s not closed (%s)", run.id, exc.message)
                continue
            closed.append(run.id)
        return closed

    async def close_run(self, run: RunRecord) -> None:
        """Append the closing events and the terminal RUN_ERROR to ``run`` in its epoch.

        ``run`` must be the record returned by ``take_over`` (this replica holds its epoch).

        Raises:
            WriteRejectedError: the lease was lost again before the write.
            RunStoreError: the store failed.
        """
        fold = RunFold()
        after = None
        while True:
            page = await self.store.read_wire(
                run.id, after=after, limit=self.settings.read_page_size
            )
            for stored in page:
                fold.apply(stored.event)
                after = stored.cursor
            if len(page) < self.settings.read_page_size:
                break
        writer = RunWriter(
            self.store, self.broker, run, fold=fold, write_retries=self.settings.write_retries
        )
        if fold.ended:  # the terminal event is durable; only the status was missing
            _log.warning("reaper: run %s already has its terminal event", run.id)
            return
        code, message = (
            ("RUN_CANCELED", CANCELED_MESSAGE)
            if run.cancel_requested
            else ("RUN_INTERRUPTED", INTERRUPTED_MESSAGE)
        )
        await writer.control(
            [*fold.closing_events(), {"type": "RUN_ERROR", "message": message, "code": code}]
        )
        _log.info("reaper: closed run %s with %s at epoch %d", run.id, code, run.epoch)

    async def run_forever(self) -> None:
        """Call :meth:`reap_once` every ``reaper_interval`` seconds until cancelled."""
        while True:
            try:
                await self.reap_once()
            except RunStoreError as exc:
                _log.warning("reaper: store error (%s)", exc.message)
            except Exception:
                _log.exception("reaper: unexpected error")
            await asyncio.sleep(self.settings.reaper_interval)
