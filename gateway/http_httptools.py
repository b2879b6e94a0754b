"""uvicorn's httptools protocol with the gateway's slow-client guards: what ``agui-gateway
serve`` runs by default (:mod:`gateway.http_protocol` describes the guards; imported only when
chosen, since it needs the ``httptools`` package).

httptools (llhttp) parses every byte it is given, pipelined requests included, and calls back
per part: a head is awaited from the connection's start and from each request's end
(``on_message_complete``) to its headers' end (``on_headers_complete``); its first byte is
``on_message_begin``. The head timer runs while a head is awaited and no response is in
progress (a pipelined request's response starts only once the one before it is complete):
armed at the connection's start, at a response's end, and at a request's end when its response
already ended (an app that answered before reading the whole body).

Each connection's two ``asyncio.Event``s (its flow control's "writable", its request cycle's
"message"), held for a stream's whole life, are :class:`~gateway.lean_event.LeanEvent`s: the
same methods and semantics with a list of waiters instead of a deque; its queue of pipelined
requests is a list too (:class:`_Pipeline`): about 2 KiB less per open stream (issue 13).
Source: uvicorn 0.55 ``uvicorn/protocols/http/httptools_impl.py`` (``__init__``,
``connection_made``, ``on_headers_complete``) and ``flow_control.py``.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .http_protocol import SlowClientGuards
from .lean_event import LeanEvent

__all__ = ["GuardedHttpToolsProtocol"]


class _Pipeline(list[Any]):
    """uvicorn's queue of pipelined requests (a ``deque``: about 700 bytes, even empty) as a
    list with the one other method uvicorn calls: ``appendleft`` to queue, ``pop`` (the right
    end) to take the oldest, truth to ask whether any wait. Rarely more than one waits."""

    __slots__ = ()

    def appendleft(self, item: Any) -> None:
        self.insert(0, item)


class GuardedHttpToolsProtocol(SlowClientGuards, HttpToolsProtocol):
    """uvicorn's ``HttpToolsProtocol`` with :class:`~gateway.http_protocol.SlowClientGuards`
    (the same 408 ``HEADER_TIMEOUT``, 431 ``HEADER_TOO_LARGE``, send timeout and write-buffer
    high-water mark as :class:`~gateway.http_protocol.GuardedH11Protocol`). Configure a
    subclass with :func:`gateway.http_protocol.guarded_protocol` (``parser="httptools"``)."""

    __slots__ = ("_in_head",)  # (see SlowClientGuards.__slots__)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True
        self.pipeline = _Pipeline()  # type: ignore[assignment]

    def _awaiting_head(self) -> bool:
        return self._in_head and (self.cycle is None or self.cycle.response_complete)

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        writable = LeanEvent()  # uvicorn's FlowControl starts writable
        writable.set()
        self.flow._is_writable_event = writable

    def data_received(self, data: bytes) -> None:
        if self._in_head and data and self._head_too_large(data):
            self._refuse_large_head()
            return
        super().data_received(data)

    # parser callbacks (within ``feed_data``)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_started = True

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._cancel_head_timer()
        before = self.cycle
        super().on_headers_complete()
        if self.cycle is not before and self.cycle is not None:  # a new request's cycle:
            self.cycle.message_event = LeanEvent()  # its task has not run, nothing waits yet

    def on_message_complete(self) -> None:
        super().on_message_complete()
        if self.cycle is None or (self.parser.should_upgrade() and self._should_upgrade()):
            return  # a WebSocket upgrade: the connection goes to uvicorn's WebSocket protocol
        self._in_head = True
        self._reset_head()
        if self.cycle.response_complete and not self.pipeline and not self.transport.is_closing():
            self._arm_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self._awaiting_head():
            self._await_head_after_response()
