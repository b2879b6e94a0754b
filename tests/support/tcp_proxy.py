"""A TCP forwarder on loopback, to cut a real server away mid-run (issue 12: store or broker
lost) without touching the machine's servers.

    async with TcpProxy("127.0.0.1", 5432) as proxy:   # listens on 127.0.0.1:<port 0>
        url = f"postgresql+asyncpg://postgres@127.0.0.1:{proxy.port}/test"
        ...
        await proxy.cut()      # close every connection and refuse new ones
        proxy.restore()        # accept and forward again

Plain asyncio streams, one pair of pump tasks per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Self

__all__ = ["TcpProxy"]


class TcpProxy:
    """Forward ``127.0.0.1:<port>`` to ``(host, target_port)``; :meth:`cut` / :meth:`restore`."""

    def __init__(self, host: str, target_port: int) -> None:
        self.host = host
        self.target_port = target_port
        self.port = 0
        self.accepting = True
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def cut(self) -> None:
        """Reset every forwarded connection and refuse new ones until :meth:`restore`."""
        self.accepting = False
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    def restore(self) -> None:
        """Forward new connections again."""
        self.accepting = True

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.accepting:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self.connections += 1
        self._writers.update((writer, up_writer))
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pipe(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (OSError, ConnectionError):
            pass
        finally:
            sink.transport.abort()
