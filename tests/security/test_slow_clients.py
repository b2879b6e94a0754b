"""Slow clients cost bounded memory and time (issue 15): request heads and bodies that
trickle in are timed out (slowloris), oversized heads and too many connections are refused,
and a client that stops reading a stream is dropped while its run goes on and can be resumed
with ``Last-Event-ID``. Raw sockets against a live uvicorn on port 0, each test with both
protocols ``serve`` can run (``GATEWAY_HTTP_PROTOCOL``: httptools, h11;
:mod:`gateway.http_protocol`, :mod:`gateway.http_httptools`, :mod:`gateway.bounds_settings`)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import h11
import httpx
import orjson
import pytest
from gwtest import RUN_INPUT, chunk, sse
from slow_gateway import connect, live_gateway, read_until_closed, wait_for

from gateway.sse_response import MAX_WRITE_BYTES

pytestmark = pytest.mark.timeout(120)

HEAD = b"POST /v1/agui/gpt HTTP/1.1\r\nHost: gateway.test\r\n"


@pytest.fixture(params=["httptools", "h11"])
def http_protocol(request: pytest.FixtureRequest) -> str:
    """``GATEWAY_HTTP_PROTOCOL`` of the gateway under test."""
    return str(request.param)


def refuse_upstream() -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no upstream call expected")

    return httpx.MockTransport(handler)


def status_and_body(raw: bytes) -> tuple[int, dict[str, Any]]:
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(raw)
    status, body = 0, b""
    while True:
        event = conn.next_event()
        if isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            body += event.data
        elif event is h11.NEED_DATA or isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
    if not body.startswith(b"{"):
        return status, {"text": body.decode()}  # uvicorn's own 503 is text/plain
    return status, orjson.loads(body)


def test_a_request_head_that_trickles_in_gets_408_and_is_closed(
    tmp_path: Path, http_protocol: str
) -> None:
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, header_timeout_seconds=0.5
    ) as server:
        sock = connect(server)
        sock.sendall(HEAD)  # ... and never the blank line
        started = time.monotonic()
        status, body = status_and_body(read_until_closed(sock))
        assert time.monotonic() - started < 10
    assert status == 408
    assert body["error"]["code"] == "HEADER_TIMEOUT"


def test_a_connection_that_sends_nothing_is_closed(tmp_path: Path, http_protocol: str) -> None:
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, header_timeout_seconds=0.5
    ) as server:
        sock = connect(server)
        assert read_until_closed(sock) == b""
        wait_for(lambda: not server.server_state.connections)


def test_a_kept_alive_connection_gets_the_head_timeout_again(
    tmp_path: Path, http_protocol: str
) -> None:
    settings = {"header_timeout_seconds": 0.5, "keep_alive_seconds": 60}
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, **settings
    ) as server:
        sock = connect(server)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n")
        first = b""
        while not first.endswith(b"}"):  # the whole first answer (its JSON body ends with })
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 OK")
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # a second head, never finished
        status, body = status_and_body(read_until_closed(sock))
    assert (status, body["error"]["code"]) == (408, "HEADER_TIMEOUT")


def test_a_body_that_trickles_in_gets_408_request_timeout(
    tmp_path: Path, http_protocol: str
) -> None:
    settings = {"body_timeout_seconds": 0.5, "header_timeout_seconds": 30}
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, **settings
    ) as server:
        sock = connect(server)
        body = orjson.dumps(RUN_INPUT)
        sock.sendall(
            HEAD
            + b"content-type: application/json\r\ncontent-length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body[:10]
        )
        status, answer = status_and_body(read_until_closed(sock))
    assert status == 408
    assert answer["error"]["code"] == "REQUEST_TIMEOUT"


@pytest.mark.parametrize("pieces", [1, 3, 200], ids=["whole", "in-3", "in-200"])
def test_an_oversized_head_gets_431_however_it_arrives(
    tmp_path: Path, http_protocol: str, pieces: int
) -> None:
    head = HEAD + b"x-filler: " + b"a" * 4096 + b"\r\n\r\n"
    step = -(-len(head) // pieces)
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, max_header_bytes=2048
    ) as server:
        sock = connect(server)
        try:
            for start in range(0, len(head), step):
                sock.sendall(head[start : start + step])
                time.sleep(0.002)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the rest was sent
        status, body = status_and_body(read_until_closed(sock))
    assert (status, body["error"]["code"]) == (431, "HEADER_TOO_LARGE")


def test_a_head_within_the_bound_passes_with_its_body(tmp_path: Path, http_protocol: str) -> None:
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, max_header_bytes=2048
    ) as server:
        sock = connect(server)
        filler = b"x-filler: " + b"a" * 1500 + b"\r\n"
        sock.sendall(
            b"GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nconnection: close\r\n"
            + filler
            + b"\r\n"
        )
        status, body = status_and_body(read_until_closed(sock))
    assert (status, body) == (200, {"status": "ok"})


def test_connections_past_the_limit_get_503(tmp_path: Path, http_protocol: str) -> None:
    """``GATEWAY_MAX_CONNECTIONS=3`` serves three connections at once; a fourth gets 503."""
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, max_connections=3
    ) as server:
        idle = [connect(server), connect(server)]
        wait_for(lambda: len(server.server_state.connections) == 2)
        third = connect(server)
        wait_for(lambda: len(server.server_state.connections) == 3)
        third.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nconnection: close\r\n\r\n")
        served, _ = status_and_body(read_until_closed(third))
        idle.append(connect(server))  # the third closed: three open again
        wait_for(lambda: len(server.server_state.connections) == 3)
        sock = connect(server)
        wait_for(lambda: len(server.server_state.connections) == 4)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n")
        status, _ = status_and_body(read_until_closed(sock))
        for s in idle:
            s.close()
    assert served == 200
    assert status == 503  # uvicorn's limit_concurrency answer


# -- a client that stops reading ----------------------------------------------------------

DELTA = 4096
CHUNKS = 400


def big_upstream() -> httpx.MockTransport:
    parts: list[dict[str, Any] | str] = [chunk({"role": "assistant", "content": ""})]
    parts += [chunk({"content": f"{n:05d}" + "x" * (DELTA - 5)}) for n in range(CHUNKS)]
    parts += [chunk({}, finish="stop"), "[DONE]"]
    body = sse(*parts)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx.MockTransport(handler)


def sse_frames(text: str) -> list[tuple[str | None, dict[str, Any]]]:
    """(id, data) of every complete SSE frame with data in ``text``."""
    frames = []
    for block in text.split("\n\n")[:-1]:
        ident, data = None, None
        for line in block.split("\n"):
            if line.startswith("id: "):
                ident = line[4:]
            elif line.startswith("data: "):
                data = orjson.loads(line[6:])
        if data is not None:
            frames.append((ident, data))
    return frames


def dechunk(raw: bytes) -> str:
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="POST", target="/", headers=[("host", "x")]))
    conn.receive_data(raw)
    out = b""
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError:
            break
        if isinstance(event, h11.Data):
            out += event.data
        elif not isinstance(event, h11.Response | h11.InformationalResponse):
            break
    return out.decode("utf-8", "replace")


def test_a_client_that_stops_reading_is_dropped_and_resumes(
    tmp_path: Path, http_protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gateway.http")
    buffer_bytes = 16 * 1024
    settings = {
        "send_timeout_seconds": 1.0,
        "write_buffer_bytes": buffer_bytes,
        "socket_send_buffer_bytes": 4096,  # with the client's small SO_RCVBUF: the kernel's
    }  # buffers fill fast, then the transport's own
    with live_gateway(tmp_path, big_upstream(), http_protocol=http_protocol, **settings) as server:
        sock = connect(server, rcvbuf=4096)
        wait_for(lambda: len(server.server_state.connections) == 1)
        (protocol,) = server.server_state.connections
        body = orjson.dumps(RUN_INPUT)
        sock.sendall(
            HEAD
            + b"content-type: application/json\r\ncontent-length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        received = b""
        while len(sse_frames(dechunk(received))) < 3:
            received += sock.recv(4096)
        # ... and never read again: the gateway must drop the connection, not buffer the run
        most_buffered = 0

        def dropped() -> bool:
            nonlocal most_buffered
            if protocol.transport.is_closing():
                return True
            most_buffered = max(most_buffered, protocol.transport.get_write_buffer_size())
            return False

        wait_for(dropped, deadline=30)
        assert any("took no bytes" in r.getMessage() for r in caplog.records)  # the send timeout
        wait_for(lambda: not server.server_state.connections)
        # the high-water mark + one write (joined chunks stop growing past MAX_WRITE_BYTES)
        assert most_buffered <= buffer_bytes + MAX_WRITE_BYTES + 2 * DELTA
        broker = server.config.app.state.services.manager.broker  # type: ignore[attr-defined]
        wait_for(lambda: broker.usage().readers == 0)  # the reader was released
        first = sse_frames(dechunk(received))
        last_id = [ident for ident, _ in first if ident][-1]
        base = f"http://127.0.0.1:{server.bound_port}"
        with httpx.Client(base_url=base, timeout=30) as client:
            resumed = client.get(
                "/api/v1/agent/runs/thread-1/events",
                params={"runId": "run-1"},
                headers={"last-event-id": last_id},
            )
        sock.close()
    assert resumed.status_code == 200
    rest = sse_frames(resumed.text)
    seqs = [int(ident.split(".")[1]) for ident, _ in [*first, *rest] if ident]
    assert seqs == list(range(1, len(seqs) + 1))  # nothing lost, nothing twice
    assert rest[-1][1]["type"] == "RUN_FINISHED"  # the run went on without its client
    text = "".join(d.get("delta", "") for _, d in [*first, *rest])
    assert text == "".join(f"{n:05d}" + "x" * (DELTA - 5) for n in range(CHUNKS))
