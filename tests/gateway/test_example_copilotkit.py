"""``examples/copilotkit`` (issue 14 item 6): the CopilotKit runtime (``@copilotkit/runtime``
1.75.0, its v2 Node listener) with an AG-UI ``HttpAgent`` pointed at the gateway.

The example server (``examples/copilotkit/server.mjs``, packages from its own ``npm ci``) runs
against a live gateway (uvicorn, port 0) whose upstream is a scripted OpenAI Chat endpoint. One
run is started the way a CopilotKit frontend starts it (``POST {basePath}/agent/default/run``
with a ``RunAgentInput``, the runtime's multi-route endpoint, CopilotKit docs "Runtime HTTP
endpoints"): it reaches the gateway (the upstream is called once, the gateway records the run
under the frontend's ids) and the runtime streams the run back, text and tool call, ending
with RUN_FINISHED.

The turn holds a tool call the client must answer, so the gateway's RUN_FINISHED carries
``outcome: {type: "success", pendingToolCallIds}`` (AG-UI 1.0). The runtime's own
``@ag-ui/client`` 0.0.59 refuses that key (``unrecognized_keys``: RUN_ERROR
``INCOMPLETE_STREAM``), so the example's ``HttpAgent`` is ``@ag-ui/client`` 1.0.0, which this
test keeps honest.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_gateway import Script, ScriptedUpstream, serve_gateway
from corpus import require_service

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import chat_events

pytestmark = pytest.mark.timeout(180)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "copilotkit"
TEXT = ["The ", "weather ", "in ", "Paris ", "is ", "sunny."]
TURN = chat_events(text=TEXT, tool=("c1", "show_weather", ['{"ci', 'ty": ', '"Paris"}']))
_WAIT = 90.0  # seconds the runtime may take to start on a loaded machine (not asserted)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[tuple[ScriptedUpstream, str, str]]:
    """(upstream, gateway URL, the CopilotKit runtime's base URL)."""
    node = shutil.which("node")
    installed = (EXAMPLE / "node_modules" / "@copilotkit" / "runtime" / "package.json").is_file()
    require_service(
        node is not None and installed, f"node or {EXAMPLE}/node_modules missing: npm ci there"
    )
    assert node is not None
    with ScriptedUpstream() as upstream:
        with serve_gateway(tmp_path, upstream.base_url, cors_origin="http://127.0.0.1") as url:
            env = {
                **os.environ,
                "GATEWAY_URL": url,
                "GATEWAY_ROUTE": "gpt",
                "PORT": "0",
                "COPILOTKIT_TELEMETRY_DISABLED": "true",
                "DO_NOT_TRACK": "1",
            }
            proc = subprocess.Popen(
                [node, str(EXAMPLE / "server.mjs")],
                cwd=EXAMPLE,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            lines: queue.Queue[str] = queue.Queue()

            def read() -> None:
                assert proc.stdout is not None
                for line in proc.stdout:
                    lines.put(line)

            threading.Thread(target=read, daemon=True).start()
            try:
                first = lines.get(timeout=_WAIT)
                yield upstream, url, json.loads(first)["listening"]
            finally:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()


def sse_events(body: bytes) -> list[dict[str, Any]]:
    out = []
    for block in body.decode().split("\n\n"):
        data = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


def test_a_copilotkit_run_goes_through_the_gateway(
    runtime: tuple[ScriptedUpstream, str, str],
) -> None:
    upstream, gateway, base = runtime
    upstream.queue(Script(TURN))
    run_input = {
        "threadId": "ck-t1",
        "runId": "ck-r1",
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": "Weather in Paris?"}],
        "tools": [
            {
                "name": "show_weather",
                "description": "Show the weather card.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ],
        "context": [],
        "forwardedProps": {},
    }
    with httpx.Client(timeout=60) as http:
        info = http.get(f"{base}/info")
        assert info.status_code == 200 and "default" in info.json()["agents"]
        answer = http.post(f"{base}/agent/default/run", json=run_input)
        assert answer.status_code == 200
        events = sse_events(answer.content)
        runs = http.get(f"{gateway}/api/v1/agent/runs", params={"threadId": "ck-t1"}).json()

    types = [e["type"] for e in events]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED", types
    assert "RUN_ERROR" not in types
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "".join(TEXT)
    [start] = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert (start["toolCallId"], start["toolCallName"]) == ("c1", "show_weather")
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"city": "Paris"}
    assert events[-1]["outcome"]["pendingToolCallIds"] == ["c1"]

    assert len(upstream.requests) == 1  # the runtime's run is the gateway's one upstream call
    assert [(r["runId"], r["status"]) for r in runs["runs"]] == [("ck-r1", "completed")]
