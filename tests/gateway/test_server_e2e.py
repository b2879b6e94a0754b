"""End to end over a real uvicorn on 127.0.0.1 (port 0, in a thread) serving the embedded
demo route: the stream is read as it arrives, and the real clients (``@ag-ui/client``,
``ai`` v7/v6/v5) run a whole tool round trip against it with their own requests."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from real_clients import HARNESS_DIR, require_harness

from gateway.app import create_app
from gateway.config import Settings
from gateway.server import GatewayServer, build_server

LIVE_SCRIPT = Path(__file__).resolve().parent / "live_clients.mjs"
STARTUP_DEADLINE_S = 30.0


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[GatewayServer, io.StringIO]]:
    out = io.StringIO()
    runs_db = tmp_path_factory.mktemp("e2e") / "runs.db"  # a fresh run store per session
    app = create_app(Settings(config=None, database_url=f"sqlite:///{runs_db}"))
    srv = build_server(app, "127.0.0.1", 0, out=out, log_level="warning")
    thread = threading.Thread(target=srv.run, name="gateway-e2e", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while srv.bound_port is None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert srv.bound_port is not None, "uvicorn did not start"
    yield srv, out
    srv.should_exit = True
    thread.join(STARTUP_DEADLINE_S)


def base_url(srv: GatewayServer) -> str:
    return f"http://127.0.0.1:{srv.bound_port}"


def test_startup_prints_a_curl_line_for_the_bound_port(
    server: tuple[GatewayServer, io.StringIO],
) -> None:
    srv, out = server
    line = next(s for s in out.getvalue().splitlines() if s.startswith("curl "))
    assert f"http://127.0.0.1:{srv.bound_port}/v1/agui/demo" in line
    assert "-N" in line and "content-type: application/json" in line
    with httpx.Client(timeout=10) as client:
        assert client.get(f"{base_url(srv)}/healthz").json() == {"status": "ok"}


def test_demo_stream_is_read_as_it_arrives(server: tuple[GatewayServer, io.StringIO]) -> None:
    srv, _ = server
    body = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "m1", "role": "user", "content": "Weather in Lisbon?"}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }
    reads: list[bytes] = []
    events: list[dict[str, Any]] = []
    buffer = b""
    with httpx.Client(timeout=30) as client:
        with client.stream("POST", f"{base_url(srv)}/v1/agui/demo", json=body) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
            assert response.headers["x-accel-buffering"] == "no"
            for raw in response.iter_raw():
                reads.append(raw)
                buffer += raw
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    for line in block.split(b"\n"):  # frames also carry `id: <cursor>`
                        if line.startswith(b"data: "):
                            events.append(orjson.loads(line[6:]))
                if events and events[0]["type"] == "RUN_STARTED":
                    assert events[0]["runId"] == "r1"
    assert len(reads) > 1  # delivered in pieces, not one buffered body
    kinds = [e["type"] for e in events]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Let me check the weather in Lisbon."
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert orjson.loads(args) == {"city": "Lisbon"}


def test_real_clients_complete_a_tool_round_trip(
    server: tuple[GatewayServer, io.StringIO],
) -> None:
    require_harness()
    srv, _ = server
    node = shutil.which("node") or "node"
    done = subprocess.run(
        [node, str(LIVE_SCRIPT), str(HARNESS_DIR), base_url(srv)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    results = json.loads(done.stdout)

    agui = results["agui"]
    assert agui["error"] is None and agui["runErrors"] == [], agui
    roles = [m["role"] for m in agui["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"], agui["messages"]
    call = agui["messages"][1]["toolCalls"][0]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Rome"}
    assert agui["messages"][3]["content"] == 'Here is the weather: {"temperature":21}.'

    for name in ("ai", "ai-v6", "ai-v5"):
        sdk = results[name]
        assert sdk["error"] is None and sdk["chatError"] is None, (name, sdk)
        assert sdk["status"] == "ready", (name, sdk)
        messages = sdk["messages"]
        # The continuation reused the assistant message id: one assistant message, not two.
        assert [m["role"] for m in messages] == ["user", "assistant"], (name, messages)
        parts = messages[1]["parts"]
        tool = next(p for p in parts if p["type"] == "tool-get_weather")
        assert tool["state"] == "output-available" and tool["input"] == {"city": "Rome"}
        texts = [p["text"] for p in parts if p["type"] == "text"]
        assert texts == [
            "Let me check the weather in Rome.",
            'Here is the weather: {"temperature":21}.',
        ], (name, parts)
