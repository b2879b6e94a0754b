"""The upstream body read without httpx's ``aiter_bytes`` layers (issue 13: memory per open
stream, ``gateway.upstream._body_chunks``): the same bytes as ``Response.aiter_bytes`` gives,
however the connection splits them, and an encoded body still decoded (RFC 9110 §8.4)."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.upstream import _body_chunks


class Pieces(httpx.AsyncByteStream):
    """A response body arriving in the given pieces (empty ones included)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


async def read(pieces: list[bytes], headers: dict[str, str], *, fast: bool) -> list[bytes]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=headers, stream=Pieces(pieces))

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        request = client.build_request("POST", "http://upstream.test/v1/chat/completions")
        response = await client.send(request, stream=True)
        try:
            chunks = _body_chunks(response) if fast else response.aiter_bytes()
            return [chunk async for chunk in chunks if chunk]  # as Upstream.events skips b""
        finally:
            await response.aclose()


sse = st.lists(st.binary(max_size=40), max_size=8)


@given(pieces=sse)
async def test_an_unencoded_body_gives_what_aiter_bytes_gives(pieces: list[bytes]) -> None:
    headers = {"content-type": "text/event-stream"}
    fast = await read(pieces, headers, fast=True)
    assert fast == await read(pieces, headers, fast=False)
    assert b"".join(fast) == b"".join(pieces)


@given(pieces=sse)
async def test_identity_is_read_as_unencoded(pieces: list[bytes]) -> None:
    headers = {"content-type": "text/event-stream", "content-encoding": "Identity"}
    assert b"".join(await read(pieces, headers, fast=True)) == b"".join(pieces)


async def test_a_gzip_body_is_still_decoded() -> None:
    body = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'
    packed = gzip.compress(body)
    pieces = [packed[:7], packed[7:20], packed[20:]]
    headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
    assert b"".join(await read(pieces, headers, fast=True)) == body


class Cut(httpx.AsyncByteStream):
    """A body whose connection is lost after its first piece (the transport raises httpx's
    error itself, as ``gateway.upstream_pool`` and httpx's own transports do)."""

    closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b"data: {}\n\n"
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")

    async def aclose(self) -> None:
        self.closed = True


async def test_a_lost_connection_raises_through_the_unwrapped_stream() -> None:
    # _body_chunks reads the transport's stream itself, past httpx's BoundAsyncStream: what it
    # raises, what response.aclose() closes and the response's elapsed must stay as they were
    body = Cut()
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, stream=body))
    ) as client:
        response = await client.send(client.build_request("POST", "http://u.test/"), stream=True)
        got: list[bytes] = []
        try:
            with pytest.raises(httpx.RemoteProtocolError):
                async for chunk in _body_chunks(response):
                    got.append(chunk)
        finally:
            await response.aclose()
    assert got == [b"data: {}\n\n"]
    assert body.closed
    assert response.elapsed.total_seconds() >= 0  # set by httpx's wrapper on close
