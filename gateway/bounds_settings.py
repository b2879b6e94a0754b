"""Settings bounding what one caller or one connection costs (issue 15), read from
``GATEWAY_*``; :class:`gateway.config.Settings` inherits them.

Broker memory (:mod:`gateway.broker`; a reader past its bound reads the store, nothing lost)::

    GATEWAY_BROKER_MAX_EVENTS          events retained per run (default 2048; Redis MAXLEN ~)
    GATEWAY_BROKER_MAX_BYTES           bytes retained per run, in-process (default 4 MiB)
    GATEWAY_BROKER_READER_MAX_EVENTS   events queued per reader (default 1024; Redis XREAD COUNT)
    GATEWAY_BROKER_READER_MAX_BYTES    bytes queued per reader, in-process (default 1 MiB)
    GATEWAY_BROKER_TTL_SECONDS         an idle run's tail is dropped after (default 3600)
    GATEWAY_BROKER_ENDED_TTL_SECONDS   an ended run's stream is dropped after (default 60)

Connections (``agui-gateway serve``: uvicorn settings and :mod:`gateway.http_protocol`)::

    GATEWAY_HEADER_TIMEOUT_SECONDS     request line + headers must arrive within (default 10)
    GATEWAY_MAX_HEADER_BYTES           request line + headers at most (default 16 KiB; 431)
    GATEWAY_KEEP_ALIVE_SECONDS         idle keep-alive connection closed after (default 5)
    GATEWAY_MAX_CONNECTIONS            connections or requests at once, then 503 (default
                                       10,000, the open-stream target, issue 13; 0: no limit;
                                       each stream also holds an upstream socket: keep the
                                       file-descriptor limit above twice this)
    GATEWAY_SEND_TIMEOUT_SECONDS       a client that takes no bytes for this long while output
                                       waits is dropped; its run goes on (default 30)
    GATEWAY_WRITE_BUFFER_BYTES         output buffered per connection before waiting for the
                                       client (high-water mark, default 64 KiB)
    GATEWAY_SOCKET_SEND_BUFFER_BYTES   SO_SNDBUF of each connection (default 0: the kernel's
                                       autotuning, up to net.ipv4.tcp_wmem's maximum)
    GATEWAY_BODY_TIMEOUT_SECONDS       a POST body must arrive within (default 30; 408)
    GATEWAY_HTTP_PROTOCOL              uvicorn's HTTP/1.1 parser, both with the bounds above:
                                       auto (default: httptools when importable, else h11),
                                       httptools or h11

The cyclic garbage collector of ``agui-gateway serve`` (:func:`gateway.server.gc_policy`)::

    GATEWAY_GC_FREEZE                  once started, collect then ``gc.freeze()`` what the
                                       start-up made (default on; 0/false: off)
    GATEWAY_GC_THRESHOLD               generation-0 threshold, net container allocations
                                       between young collections (default 50,000; Python's
                                       is 700; 0: the interpreter's left as it is)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from pydantic_settings import BaseSettings

from .broker import (
    DEFAULT_ENDED_TTL,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAXLEN,
    DEFAULT_READER_MAX_BYTES,
    DEFAULT_READER_MAXLEN,
    DEFAULT_TTL,
)

__all__ = ["DEFAULT_GC_THRESHOLD", "BoundsSettings"]

DEFAULT_GC_THRESHOLD = 50_000
"""``serve``'s generation-0 threshold (``GATEWAY_GC_THRESHOLD``; measured in README
Performance, "The garbage collector of serve")."""


class BoundsSettings(BaseSettings):
    """The ``GATEWAY_*`` bounds of broker memory and of connections (module docstring).

    Attributes:
        broker_max_events, broker_max_bytes: retained tail per run (events; bytes of
            approximate JSON, in-process only).
        broker_reader_max_events, broker_reader_max_bytes: queued per reader.
        broker_ttl_seconds, broker_ended_ttl_seconds: lifetime of a run's tail after its last
            publish / after its terminal event.
        header_timeout_seconds: seconds for a request's line and headers (slowloris).
        max_header_bytes: bytes of a request's line and headers (uvicorn
            ``h11_max_incomplete_event_size``).
        keep_alive_seconds: uvicorn ``timeout_keep_alive`` (whole seconds).
        max_connections: uvicorn ``limit_concurrency`` (0: none).
        send_timeout_seconds: seconds a connection may keep output waiting for its client.
        write_buffer_bytes: the connection's write-buffer high-water mark.
        socket_send_buffer_bytes: ``SO_SNDBUF`` of each connection (0: the kernel's).
        body_timeout_seconds: seconds for a whole request body (408 ``REQUEST_TIMEOUT``).
        http_protocol: ``auto``, ``httptools`` or ``h11``
            (:func:`gateway.http_protocol.resolve_http_parser`).
        gc_freeze: ``serve`` freezes the objects its start-up made (``gc.freeze``).
        gc_threshold: ``serve``'s generation-0 threshold (``gc.set_threshold``; 0: unchanged).
    """

    broker_max_events: int = Field(default=DEFAULT_MAXLEN, ge=1)
    broker_max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1)
    broker_reader_max_events: int = Field(default=DEFAULT_READER_MAXLEN, ge=1)
    broker_reader_max_bytes: int = Field(default=DEFAULT_READER_MAX_BYTES, ge=1)
    broker_ttl_seconds: float = Field(default=DEFAULT_TTL, gt=0)
    broker_ended_ttl_seconds: float = Field(default=DEFAULT_ENDED_TTL, gt=0)
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    max_header_bytes: int = Field(default=16 * 1024, ge=1024)
    keep_alive_seconds: int = Field(default=5, ge=1)
    max_connections: int = Field(default=10_000, ge=0)
    send_timeout_seconds: float = Field(default=30.0, gt=0)
    write_buffer_bytes: int = Field(default=64 * 1024, ge=1024)
    socket_send_buffer_bytes: int = Field(default=0, ge=0)
    body_timeout_seconds: float = Field(default=30.0, gt=0)
    http_protocol: Literal["auto", "httptools", "h11"] = "auto"
    gc_freeze: bool = True
    gc_threshold: int = Field(default=DEFAULT_GC_THRESHOLD, ge=0)

    def broker_bounds(self) -> dict[str, Any]:
        """The keyword arguments of :func:`gateway.broker.open_broker` these settings name."""
        return {
            "maxlen": self.broker_max_events,
            "max_bytes": self.broker_max_bytes,
            "reader_maxlen": self.broker_reader_max_events,
            "reader_max_bytes": self.broker_reader_max_bytes,
            "ttl": self.broker_ttl_seconds,
            "ended_ttl": self.broker_ended_ttl_seconds,
        }
