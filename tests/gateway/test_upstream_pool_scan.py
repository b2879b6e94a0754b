"""The sharded pool's linear bookkeeping scan (:class:`gateway.upstream_pool._Pool`) decides what
httpcore 1.0.9's own ``AsyncConnectionPool._assign_requests_to_connections`` decides.

Both run over the same pool states (connections closed, expired, idle, busy, for one origin or
another; requests queued or assigned; ``max_connections`` and ``max_keepalive_connections``
drawn): the connections left in the pool and their order, the ones to close, and the
connection each request gets must be the same.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpcore
from httpcore._async.connection_pool import AsyncPoolRequest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.upstream_pool import _Pool

URLS = ["http://h0:80/", "http://h1:80/"]
ORIGINS = [httpcore.URL(url).origin for url in URLS]


@dataclass(eq=False)
class _Conn:
    """A connection that only answers the pool's questions (its state drawn)."""

    name: str
    origin: httpcore.Origin
    closed: bool = False
    expired: bool = False
    idle: bool = False
    available: bool = False
    asked: list[str] = field(default_factory=list)

    def is_closed(self) -> bool:
        return self.closed

    def has_expired(self) -> bool:
        return self.expired

    def is_idle(self) -> bool:
        return self.idle

    def is_available(self) -> bool:
        return self.available

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == self.origin


def _pool(
    cls: type[httpcore.AsyncConnectionPool], max_conn: int, keep: int
) -> httpcore.AsyncConnectionPool:
    pool = cls(max_connections=max_conn, max_keepalive_connections=keep)
    made = iter(range(1000))

    def create(origin: httpcore.Origin) -> _Conn:  # new connections, named in order
        return _Conn(f"new{next(made)}", origin)

    pool.create_connection = create  # type: ignore[method-assign,assignment]
    return pool


async def _scan(pool: httpcore.AsyncConnectionPool) -> list[httpcore.AsyncConnectionInterface]:
    return pool._assign_requests_to_connections()


conn_states = st.tuples(
    st.integers(0, 1), st.booleans(), st.booleans(), st.booleans(), st.booleans()
)


@settings(max_examples=400, deadline=None)
@given(
    max_conn=st.integers(1, 6),
    keep=st.integers(0, 6),
    conns=st.lists(conn_states, max_size=8),
    requests=st.lists(st.tuples(st.integers(0, 1), st.integers(-1, 7)), max_size=6),
)
def test_the_linear_scan_decides_what_httpcore_decides(
    max_conn: int,
    keep: int,
    conns: list[tuple[int, bool, bool, bool, bool]],
    requests: list[tuple[int, int]],
) -> None:
    outcomes = []
    for cls in (httpcore.AsyncConnectionPool, _Pool):
        pool = _pool(cls, max_conn, keep)
        pool._connections = [
            _Conn(f"c{i}", ORIGINS[o], closed=c, expired=e, idle=d, available=a)  # type: ignore[misc]
            for i, (o, c, e, d, a) in enumerate(conns)
        ]
        by_name = {c.name: c for c in pool._connections}  # type: ignore[attr-defined]
        pool_requests = []
        for origin, assigned in requests:
            request = AsyncPoolRequest(httpcore.Request("GET", URLS[origin]))
            if 0 <= assigned < len(conns):
                request.connection = by_name[f"c{assigned}"]
            pool_requests.append(request)
        pool._requests = pool_requests
        closing = asyncio.run(_scan(pool))  # a request's event needs a running loop
        outcomes.append(
            (
                [c.name for c in pool._connections],  # type: ignore[attr-defined]
                [c.name for c in closing],  # type: ignore[attr-defined]
                [None if r.connection is None else r.connection.name for r in pool_requests],  # type: ignore[attr-defined]
            )
        )
    assert outcomes[0] == outcomes[1]
