"""The two HTTP/1.1 protocols ``agui-gateway serve`` can run (``GATEWAY_HTTP_PROTOCOL``):
httptools by default, h11 when asked, answering alike (a hypothesis test over request
sequences, head sizes around the bound and the pieces they arrive in), and httptools' own
case: pipelined requests, which it parses at once (:mod:`gateway.http_httptools`)."""

from __future__ import annotations

import importlib.util
import itertools
import socket
import time
from pathlib import Path
from typing import Any

import h11
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slow_gateway import connect, live_gateway, read_until_closed
from test_slow_clients import refuse_upstream, status_and_body

from gateway.app import create_app
from gateway.config import Settings
from gateway.http_httptools import GuardedHttpToolsProtocol
from gateway.http_protocol import GuardedH11Protocol, resolve_http_parser
from gateway.server import build_server

pytestmark = pytest.mark.timeout(300)

MAX_HEAD = 2048


def test_serve_runs_httptools_by_default_and_h11_when_asked() -> None:
    default = build_server(create_app(Settings(auth="off")), "127.0.0.1", 0)
    assert issubclass(default.config.http, GuardedHttpToolsProtocol)  # type: ignore[arg-type]
    app = create_app(Settings(auth="off", http_protocol="h11"))
    h11_server = build_server(app, "127.0.0.1", 0)
    assert issubclass(h11_server.config.http, GuardedH11Protocol)  # type: ignore[arg-type]


def test_auto_is_h11_without_httptools(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_http_parser("auto") == "httptools"
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "httptools" else real(name)
    )
    assert resolve_http_parser("auto") == "h11"
    assert resolve_http_parser("httptools") == "httptools"


def test_an_unknown_protocol_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="http_protocol"):
        Settings(http_protocol="h2")  # type: ignore[arg-type]


# -- both protocols answer alike ----------------------------------------------------------

KINDS = {
    "healthz": (b"GET /healthz HTTP/1.1\r\n", b""),
    "missing": (b"GET /v1/nothing-here HTTP/1.1\r\n", b""),
    "bad-json": (b"POST /v1/agui/gpt HTTP/1.1\r\ncontent-type: application/json\r\n", b"{no"),
    "not-a-run": (b"POST /v1/agui/gpt HTTP/1.1\r\ncontent-type: application/json\r\n", b"[1]"),
    "websocket": (
        b"GET /v1/agui/gpt HTTP/1.1\r\nupgrade: websocket\r\nconnection: upgrade\r\n"
        b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n",
        b"",
    ),
}


def request_bytes(kind: str, filler: int, chunked: bool) -> bytes:
    line, body = KINDS[kind]
    head = line + b"host: gateway.test\r\n" + b"x-filler: " + b"a" * filler + b"\r\n"
    if not body:
        return head + b"\r\n"
    if chunked:
        return head + b"transfer-encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    return head + b"content-length: %d\r\n\r\n" % len(body) + body


def pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def answers(port: int, requests: list[tuple[bytes, list[int]]]) -> list[tuple[int, Any]]:
    """Each request sent in its pieces on one kept-alive connection, its answer read whole
    before the next: (status, JSON body) per answer, up to the one the server closes after."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    client = h11.Connection(h11.CLIENT)
    out: list[tuple[int, Any]] = []
    try:
        for raw, cuts in requests:
            client.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
            client.send(h11.EndOfMessage())
            try:
                for piece in pieces(raw, cuts):
                    sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused before the rest was sent
            status, body, closed = 0, b"", False
            while True:
                event = client.next_event()
                if event is h11.NEED_DATA:
                    try:
                        client.receive_data(sock.recv(65536))
                    except ConnectionResetError:
                        client.receive_data(b"")
                    continue
                if isinstance(event, h11.Response):
                    status = event.status_code
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    closed = (
                        client.their_state is not h11.DONE or client.our_state is h11.MUST_CLOSE
                    )
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    closed = True
                    break
            out.append((status, orjson.loads(body) if body.startswith(b"{") else body))
            if closed or status == 0:
                break
            client.start_next_cycle()
    finally:
        sock.close()
    return out


request_strategy = st.tuples(
    st.sampled_from(sorted(KINDS)),
    st.integers(0, MAX_HEAD + 200),
    st.booleans(),
    st.lists(st.integers(0, 4000), max_size=4),
)


def test_both_protocols_answer_alike(tmp_path: Path) -> None:
    (tmp_path / "h").mkdir()
    (tmp_path / "s").mkdir()
    with (
        live_gateway(
            tmp_path / "h", refuse_upstream(), http_protocol="httptools", max_header_bytes=MAX_HEAD
        ) as fast,
        live_gateway(
            tmp_path / "s", refuse_upstream(), http_protocol="h11", max_header_bytes=MAX_HEAD
        ) as slow,
    ):
        assert issubclass(fast.config.http, GuardedHttpToolsProtocol)  # type: ignore[arg-type]
        assert issubclass(slow.config.http, GuardedH11Protocol)  # type: ignore[arg-type]

        @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(st.lists(request_strategy, min_size=1, max_size=3))
        def check(spec: list[tuple[str, int, bool, list[int]]]) -> None:
            requests = [(request_bytes(k, f, c), cuts) for k, f, c, cuts in spec]
            assert fast.bound_port is not None and slow.bound_port is not None
            got = answers(fast.bound_port, requests)
            assert got == answers(slow.bound_port, requests)
            assert len(got) >= 1 and all(status for status, _ in got)

        check()


# -- httptools parses pipelined requests at once ------------------------------------------


@pytest.fixture(params=["httptools", "h11"])
def http_protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_pipelined_requests_are_answered_in_order_then_the_head_timer_runs(
    tmp_path: Path, http_protocol: str
) -> None:
    settings = {"header_timeout_seconds": 0.5, "keep_alive_seconds": 60}
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, **settings
    ) as server:
        sock = connect(server)
        get = b"GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n"
        sock.sendall(get + get + b"GET /healthz HTTP/1.1\r\n")  # two whole, a third never ends
        raw = read_until_closed(sock)
    assert raw.count(b"HTTP/1.1 200 OK") == 2
    assert raw.index(b"HTTP/1.1 408") > raw.rindex(b"HTTP/1.1 200 OK")
    status, body = status_and_body(raw[raw.index(b"HTTP/1.1 408") :])
    assert (status, body["error"]["code"]) == (408, "HEADER_TIMEOUT")


def test_a_pipelined_head_begun_gets_the_head_timeout_not_the_keep_alive_close(
    tmp_path: Path, http_protocol: str
) -> None:
    """The defaults close an idle kept-alive connection (5 s) before a head times out (10 s):
    a connection holding the start of a pipelined head is not idle, it gets the 408."""
    settings = {"header_timeout_seconds": 2.5, "keep_alive_seconds": 1}
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, **settings
    ) as server:
        sock = connect(server)
        sock.sendall(
            b"GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\nGET /healthz HTTP/1.1\r\n"
        )
        raw = read_until_closed(sock)
    assert raw.count(b"HTTP/1.1 200 OK") == 1
    status, body = status_and_body(raw[raw.index(b"HTTP/1.1 408") :])
    assert (status, body["error"]["code"]) == (408, "HEADER_TIMEOUT")


def test_an_idle_kept_alive_connection_still_closes_silently(
    tmp_path: Path, http_protocol: str
) -> None:
    settings = {"header_timeout_seconds": 6.0, "keep_alive_seconds": 1}
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, **settings
    ) as server:
        sock = connect(server)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n")
        started = time.monotonic()
        raw = read_until_closed(sock)
    assert raw.count(b"HTTP/1.1 200 OK") == 1 and b"408" not in raw
    assert time.monotonic() - started < 4  # the keep-alive close, not the head timer


def test_an_oversized_head_behind_a_body_is_refused(tmp_path: Path, http_protocol: str) -> None:
    with live_gateway(
        tmp_path, refuse_upstream(), http_protocol=http_protocol, max_header_bytes=MAX_HEAD
    ) as server:
        sock = connect(server)
        sock.sendall(request_bytes("bad-json", 0, False))
        first = b""
        while not first.endswith(b"}"):  # the whole 4xx answer (its JSON body ends with })
            first += sock.recv(65536)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n")
        try:
            for _ in range(4):  # a head that grows past the bound in later reads
                sock.sendall(b"x-filler: " + b"a" * 1024 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        status, body = status_and_body(read_until_closed(sock))
    assert first.startswith(b"HTTP/1.1 4")
    assert (status, body["error"]["code"]) == (431, "HEADER_TOO_LARGE")


def test_a_websocket_upgrade_is_refused_alike(tmp_path: Path, http_protocol: str) -> None:
    """The app serves no WebSocket: uvicorn's WebSocket protocol answers 403 (httptools
    reports the upgrade's end of message too, with no request cycle of its own)."""
    with live_gateway(tmp_path, refuse_upstream(), http_protocol=http_protocol) as server:
        sock = connect(server)
        sock.sendall(request_bytes("websocket", 0, False))
        raw = read_until_closed(sock)
    assert raw.startswith(b"HTTP/1.1 403 Forbidden\r\n")
