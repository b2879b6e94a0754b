"""The process's open-file limit (``RLIMIT_NOFILE``), raised when ``agui-gateway serve`` starts.

Every open stream holds two sockets (the client's and the upstream's), so the soft limit most
shells start with (1024) caps a process near 500 streams, far below the default
``GATEWAY_MAX_CONNECTIONS`` (10,000). :func:`raise_open_files_limit` lifts the soft limit to the
hard limit (an unprivileged process may; ``setrlimit(2)``), logs what it did on the
``gateway.server`` logger, and warns when the limit is still below what the connection bound
needs: :func:`needed_open_files`, two descriptors per connection plus :data:`FD_MARGIN` for
the listening socket, the store, the broker, logs and imports. When the limit stays short,
:func:`bounded_connections` lowers the connection bound to what fits, so a connection beyond
it is answered ``503`` before its run starts, instead of a stream that starts and then ends
with ``RUN_ERROR UPSTREAM_UNAVAILABLE`` because its upstream connect fails with ``EMFILE``
(what 10,000 streams under a hard limit of 20,000 did: issue 13 item 5).

Source: POSIX ``getrlimit``/``setrlimit`` (Python stdlib :mod:`resource`); Linux refuses a soft
limit above ``/proc/sys/fs/nr_open`` (the usual ``RLIM_INFINITY`` hard limit cannot be taken
as is), macOS one above ``OPEN_MAX`` (10,240): the limit is then raised as far as
:data:`FALLBACK_LIMITS` allows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "FALLBACK_LIMITS",
    "FD_MARGIN",
    "OpenFilesLimit",
    "bounded_connections",
    "connections_that_fit",
    "needed_open_files",
    "raise_open_files_limit",
]

logger = logging.getLogger("gateway.server")

FD_MARGIN = 256
"""Descriptors kept beside two per connection (listening socket, database, Redis, logs)."""

FALLBACK_LIMITS = (1_048_576, 65_536, 10_240)
"""Soft limits tried, largest first, when the hard limit itself is refused (unlimited hard
limit on Linux: ``nr_open`` defaults to 1,048,576; macOS: ``OPEN_MAX`` 10,240)."""

GetLimit = Callable[[int], tuple[int, int]]
SetLimit = Callable[[int, tuple[int, int]], None]


@dataclass(frozen=True)
class OpenFilesLimit:
    """What :func:`raise_open_files_limit` found and did (descriptor counts).

    Attributes:
        before: the soft limit at start.
        soft: the soft limit now.
        hard: the hard limit (``resource.RLIM_INFINITY`` when unlimited).
        needed: descriptors the connection bound needs (:func:`needed_open_files`); ``None``
            when there is no bound (``GATEWAY_MAX_CONNECTIONS=0``).
    """

    before: int
    soft: int
    hard: int
    needed: int | None

    @property
    def enough(self) -> bool:
        """Whether the soft limit covers :attr:`needed` (always, when there is no bound)."""
        return self.needed is None or self.soft >= self.needed


def needed_open_files(max_connections: int) -> int | None:
    """Descriptors ``max_connections`` open streams need: two sockets each plus
    :data:`FD_MARGIN`; ``None`` for ``0`` (no connection bound, nothing to compare)."""
    if max_connections <= 0:
        return None
    return 2 * max_connections + FD_MARGIN


def connections_that_fit(max_connections: int, soft: int) -> int:
    """The connection bound ``soft`` descriptors can serve: ``max_connections`` when its
    :func:`needed_open_files` fits (or ``soft`` is ``resource.RLIM_INFINITY``, or there is no
    bound, ``0``), else ``(soft - FD_MARGIN) // 2``, at least 1."""
    import resource

    needed = needed_open_files(max_connections)
    if needed is None or soft == resource.RLIM_INFINITY or soft >= needed:
        return max_connections
    return max(1, (soft - FD_MARGIN) // 2)


def bounded_connections(max_connections: int, *, getrlimit: GetLimit | None = None) -> int:
    """``GATEWAY_MAX_CONNECTIONS`` lowered to what the current soft ``RLIMIT_NOFILE`` serves
    (:func:`connections_that_fit`; a warning on the ``gateway.server`` logger when lowered).

    Args:
        max_connections: ``GATEWAY_MAX_CONNECTIONS`` (``0``: no bound, returned as is).
        getrlimit: :func:`resource.getrlimit` (tests pass a fake).

    Returns:
        The bound uvicorn's ``limit_concurrency`` gets (``0``: none). Unchanged where
        :mod:`resource` does not exist (Windows).
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return max_connections
    soft, _hard = (getrlimit or resource.getrlimit)(resource.RLIMIT_NOFILE)
    bound = connections_that_fit(max_connections, soft)
    if bound != max_connections:
        logger.warning(
            "open files limit (RLIMIT_NOFILE) %d serves %d connections (2 sockets per stream + "
            "%d), not GATEWAY_MAX_CONNECTIONS=%d: connections beyond %d are answered 503",
            soft,
            bound,
            FD_MARGIN,
            max_connections,
            bound,
        )
    return bound


def raise_open_files_limit(
    max_connections: int,
    *,
    getrlimit: GetLimit | None = None,
    setrlimit: SetLimit | None = None,
) -> OpenFilesLimit | None:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit; log the result; warn when short.

    Args:
        max_connections: ``GATEWAY_MAX_CONNECTIONS`` (``0``: no bound).
        getrlimit, setrlimit: the :mod:`resource` functions (tests pass fakes).

    Returns:
        The limits before and after, or ``None`` where :mod:`resource` does not exist
        (Windows: nothing is changed or logged). Never raises: a refused ``setrlimit`` leaves
        the limit as it was (logged as a warning).
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    get = getrlimit or resource.getrlimit
    put = setrlimit or resource.setrlimit
    which = resource.RLIMIT_NOFILE
    infinity = resource.RLIM_INFINITY
    before, hard = get(which)
    soft = before
    targets = [hard] if hard != infinity else []
    ceiling = hard if hard != infinity else None
    targets += [t for t in FALLBACK_LIMITS if ceiling is None or t < ceiling]
    if before == infinity:
        targets = []  # nothing is higher
    for target in targets:
        if target <= before:
            break  # already as high as anything left to try
        try:
            put(which, (target, hard))
        except (ValueError, OSError):
            continue
        soft = target
        break
    limit = OpenFilesLimit(before, soft, hard, needed_open_files(max_connections))
    if soft != before:
        logger.info("open files limit (RLIMIT_NOFILE) raised from %d to %d", before, soft)
    elif hard != infinity and soft < hard:
        logger.warning("open files limit (RLIMIT_NOFILE) %d: raising it to %d failed", soft, hard)
    if not limit.enough:
        logger.warning(
            "open files limit (RLIMIT_NOFILE) %d is below %d, what GATEWAY_MAX_CONNECTIONS=%d "
            "needs (2 sockets per stream + %d): raise the hard limit (ulimit -Hn, systemd "
            "LimitNOFILE, docker --ulimit nofile) or lower GATEWAY_MAX_CONNECTIONS",
            soft,
            limit.needed,
            max_connections,
            FD_MARGIN,
        )
    return limit
