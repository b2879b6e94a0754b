"""Tunables of the run core (pump, readers, reaper, retention); all durations in seconds.

The HTTP layer builds one :class:`RunSettings` from its configuration (suggested environment
variables in parentheses) and hands it to :class:`gateway.runs.RunManager`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunSettings"]


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Run-core settings.

    Attributes:
        batch_interval: max age of an unwritten delta before its batch is written (~100 ms,
            issue 3 §4) (``GATEWAY_BATCH_INTERVAL``).
        batch_max_events: a batch is written as soon as it holds this many deltas
            (``GATEWAY_BATCH_MAX_EVENTS``).
        heartbeat_interval: how often the replica refreshes its lease (one write for all its
            runs, :meth:`~gateway.runs.RunManager.beat`; a bare pump its run's) and looks for
            cancels requested on another replica (``GATEWAY_HEARTBEAT_INTERVAL``).
        lease_timeout: a running run whose heartbeat is older than this is taken over and
            closed with RUN_INTERRUPTED (``GATEWAY_LEASE_TIMEOUT``). Keep it several heartbeat
            intervals and well above clock skew between replicas.
        reaper_interval: how often each replica looks for stale runs
            (``GATEWAY_REAPER_INTERVAL``). A reader of a dead replica's run ends within about
            ``lease_timeout + reaper_interval + reader_idle_recheck``.
        reader_idle_recheck: an idle reader re-reads the store this often, so it never depends
            on one broker message (``GATEWAY_READER_RECHECK``). Rare (5 s) because it is only
            the safety net: live readers get everything, the reaper's closing events included,
            from the broker. The re-checks of all idle readers of a manager are one batched
            row read per interval (:mod:`gateway.runs.recheck`, issue 13 item 5; before it,
            one read per idle stream: 1 s made 300 idle SQLite streams cost 43 % of a core).
        read_page_size: events of a replay's first store read; its later reads double it,
            up to ``gateway.runs.reader.PAGE_GROWTH`` (8) times it, while twice a page's JSON
            stays within ``PAGE_BYTES`` (1 MiB).
        write_retries: attempts of a control-event write before the pump gives up.
        store_outage_grace: how long a write keeps retrying (with backoff) while the store is
            unreachable before the pump gives up and ends its live readers with RUN_ERROR
            ``STORE_UNAVAILABLE`` (``GATEWAY_STORE_OUTAGE_GRACE``).
        retention: runs that ended more than this long ago are purged with their events;
            0 disables purging (``GATEWAY_RETENTION_SECONDS``, default 7 days).
        purge_interval: how often the retention purge runs.
    """

    batch_interval: float = 0.1
    batch_max_events: int = 64
    heartbeat_interval: float = 2.0
    lease_timeout: float = 10.0
    reaper_interval: float = 2.0
    reader_idle_recheck: float = 5.0
    read_page_size: int = 500
    write_retries: int = 3
    store_outage_grace: float = 10.0
    retention: float = 7 * 24 * 3600.0
    purge_interval: float = 3600.0

    def __post_init__(self) -> None:
        if self.batch_max_events < 1 or self.read_page_size < 1:
            raise ValueError("batch_max_events and read_page_size must be >= 1")
        if self.lease_timeout <= self.heartbeat_interval:
            raise ValueError("lease_timeout must be longer than heartbeat_interval")
        for name in (
            "batch_interval",
            "heartbeat_interval",
            "reaper_interval",
            "reader_idle_recheck",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0")

    @property
    def cursor_slack(self) -> int:
        """How far past the durable end a producer may have published (unwritten deltas).

        Used to refuse resume cursors that cannot belong to a live run. Deltas wait at most
        one batch, but a batch kept after a failed write grows; the bound is generous.
        """
        return 16 * self.batch_max_events + 1024
