"""Live mode as a checker (issue 17): transport faults are violations with the partial report;
AI SDK live runs, --header, --save, check URL --post. Servers are raw sockets on loopback, so
a response can be cut or mislabelled at will; times come from a fake clock (no timing
assertion)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from diffcorpus import frame

from conformance.cli import main
from conformance.live import run_live

RS = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
RF = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
GOOD = frame([RS, RF])


@contextmanager
def raw_server(
    body: bytes, *, status: str = "200 OK", content_type: str = "text/event-stream",
    cut: bool = False, seen: list[bytes] | None = None,
) -> Iterator[str]:  # fmt: skip
    """One-request HTTP/1.1 server: chunked ``body``; ``cut`` drops the connection before the
    last chunk (a response that ends abnormally)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)

    def serve() -> None:
        conn, _ = sock.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, rest = data.split(b"\r\n\r\n", 1)
        length = int(next((ln.split(b":")[1] for ln in head.split(b"\r\n")
                           if ln.lower().startswith(b"content-length")), b"0"))  # fmt: skip
        while len(rest) < length:
            rest += conn.recv(65536)
        if seen is not None:
            seen.extend([head, rest])
        conn.sendall(f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n"
                     "transfer-encoding: chunked\r\n\r\n".encode())  # fmt: skip
        conn.sendall(f"{len(body):x}\r\n".encode() + body + b"\r\n")
        if not cut:
            conn.sendall(b"0\r\n\r\n")
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/agent"
    finally:
        thread.join(timeout=10)
        sock.close()


def rules(result: object) -> list[str]:
    return [v.rule_id for v in result.report.violations]  # type: ignore[attr-defined]


def test_a_clean_live_run_has_no_finding_and_sends_the_client_headers() -> None:
    seen: list[bytes] = []
    with raw_server(GOOD, seen=seen) as url:
        result = run_live(url, {"threadId": "t"}, headers={"authorization": "Bearer k"})
    assert rules(result) == [] and result.capture == GOOD and result.status == 200
    head = seen[0].decode().lower()
    assert "accept: text/event-stream" in head and "authorization: bearer k" in head
    assert json.loads(seen[1]) == {"threadId": "t"}


def test_an_aborted_response_is_a_violation_with_the_partial_report() -> None:
    """llama-index's router sends RUN_ERROR and then aborts: the live client fails."""
    body = frame([RS, {"type": "RUN_ERROR", "message": "boom"}])
    with raw_server(body, cut=True) as url:
        result = run_live(url, {})
    assert rules(result) == ["agui/transport/aborted"]
    assert result.report.events == 2 and result.report.rejected


def test_http_error_status_and_wrong_content_type() -> None:
    with raw_server(b'{"error": "nope"}', status="500 Internal Server Error",
                    content_type="application/json") as url:  # fmt: skip
        result = run_live(url, {})
    assert rules(result) == ["agui/transport/http-status"]
    with raw_server(GOOD, content_type="application/json") as url:
        result = run_live(url, {})
    assert rules(result) == ["agui/transport/content-type"]


def test_buffered_response_and_idle_gap_by_the_clock() -> None:
    events = frame([RS, {"type": "CUSTOM", "name": "n", "value": 1}, RF])
    ticks = iter([0.0, 5.0, 5.01, 5.02, 5.03])
    with raw_server(events) as url:
        result = run_live(url, {}, clock=lambda: next(ticks), buffer_after=2.0, max_gap=3.0)
    assert set(rules(result)) == {"agui/transport/buffered", "agui/transport/idle-gap"}


def test_ai_sdk_live_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = frame([{"type": "start"}, {"type": "text-start", "id": "t"},
                  {"type": "text-delta", "id": "x", "delta": "a"}, {"type": "finish"}], done=True)  # fmt: skip
    save = tmp_path / "capture.sse"
    with raw_server(body) as url:
        code = main(["run", url, "--protocol", "ai-sdk", "--save", str(save), "--format", "json",
                     "--header", "x-test: 1"])  # fmt: skip
    assert code == 1 and save.read_bytes() == body
    (report,) = json.loads(capsys.readouterr().out)["reports"]
    assert report["profile"] == "ai-sdk@7"
    assert report["violations"][0]["rule"] == "ai-sdk/stream/text-delta-without-start"


def test_check_url_can_post_an_input(tmp_path: Path) -> None:
    path = tmp_path / "input.json"
    path.write_text(json.dumps({"threadId": "t2"}))
    seen: list[bytes] = []
    with raw_server(GOOD, seen=seen) as url:
        assert main(["check", url, "--post", str(path)]) == 0
    assert seen[0].startswith(b"POST /agent") and json.loads(seen[1]) == {"threadId": "t2"}
