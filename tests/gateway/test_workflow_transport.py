"""The real ``WorkflowChatTransport`` (npm ``@workflow/ai`` 5.0.0 with ``ai`` 6.0.326,
``tests/workflow_harness``) against a live gateway (issue 14 item 4).

The gateway runs on uvicorn (port 0) behind a proxy that can cut connections; its upstream is
a scripted OpenAI Chat endpoint held at a gate. ``tests/workflow_harness/transport.mjs`` drives
the transport and reports every fetch and every chunk it yields:

* a run, the connection cut mid-stream: the transport reads ``x-workflow-run-id`` from the POST
  answer and resumes on its own with ``GET {api}/{runId}/stream?startIndex=<chunks it had>``;
  what it yields is the run's stream exactly once (compared with the stream from index 0 after
  the run ended), the message ``ai`` 6 builds has the upstream's text once, the upstream was
  called once;
* a negative ``startIndex`` on a live run (the transport's ``reconnectToStream``): the answer
  carries ``x-workflow-stream-tail-index`` and starts that many chunks before it, then goes on
  live; on an ended run it is the stream's last chunks;
* the refusals: a ``startIndex`` that is not an integer, a body ``id`` of another chat, a run
  of another chat.

The protocol (header names, URL shape, index arithmetic) is read from the package's
``dist/workflow-chat-transport.js``; the expectations come from it, not from the gateway.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from approval_turns import approval_sse, approval_turn
from browser_gateway import CuttableProxy, Script, ScriptedUpstream, serve_gateway
from corpus import require_service

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import chat_events

pytestmark = pytest.mark.timeout(180)

HARNESS = Path(__file__).resolve().parents[1] / "workflow_harness"
TEXT = ["The ", "weather ", "in ", "Paris ", "is ", "sunny."]
TURN = chat_events(text=TEXT)
GATE_AT = 4  # the upstream stops after the role chunk and three text deltas
MESSAGES = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "weather?"}]}]
_WAIT = 60.0  # seconds a step may take before the test gives up (not a timing assertion)


def require_workflow_harness() -> None:
    ok = (
        shutil.which("node") is not None
        and (HARNESS / "node_modules" / "@workflow" / "ai" / "package.json").is_file()
    )
    require_service(ok, f"node or {HARNESS}/node_modules missing: run `npm ci` there")


@dataclass
class Transport:
    """One ``transport.mjs`` process: its report lines as they come."""

    proc: subprocess.Popen[str]
    lines: queue.Queue[dict[str, Any]] = field(default_factory=queue.Queue)
    seen: list[dict[str, Any]] = field(default_factory=list)

    def next(self) -> dict[str, Any]:
        record = self.lines.get(timeout=_WAIT)
        self.seen.append(record)
        return record

    def until(self, predicate: Any) -> dict[str, Any]:
        while True:
            record = self.next()
            if predicate(record):
                return record
            assert record["event"] != "error", record

    def finish(self) -> dict[str, Any]:
        end = self.until(lambda r: r["event"] in ("end", "error"))
        self.proc.wait(_WAIT)
        assert end["event"] == "end", (end, self.proc.stderr.read() if self.proc.stderr else "")
        return end

    @property
    def chunks(self) -> list[dict[str, Any]]:
        return [r["chunk"] for r in self.seen if r["event"] == "chunk"]

    @property
    def requests(self) -> list[dict[str, Any]]:
        return [r for r in self.seen if r["event"] == "request"]


def start(options: dict[str, Any]) -> Transport:
    node = shutil.which("node")
    assert node is not None
    proc = subprocess.Popen(
        [node, str(HARNESS / "transport.mjs"), json.dumps(options)],
        cwd=HARNESS,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    transport = Transport(proc)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            transport.lines.put(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    return transport


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[ScriptedUpstream, str, CuttableProxy]]:
    """(upstream, gateway URL, a cuttable proxy in front of the gateway)."""
    require_workflow_harness()
    with ScriptedUpstream() as upstream:
        with serve_gateway(tmp_path, upstream.base_url, cors_origin="http://127.0.0.1") as url:
            parts = urlsplit(url)
            assert parts.hostname is not None and parts.port is not None
            with CuttableProxy((parts.hostname, parts.port)) as proxy:
                yield upstream, url, proxy


def sse_chunks(body: bytes) -> list[Any]:
    """The JSON ``data`` of every SSE event (``[DONE]`` left out)."""
    out = []
    for block in body.decode().split("\n\n"):
        lines = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if lines and lines != ["[DONE]"]:
            out.append(json.loads("\n".join(lines)))
    return out


def whole_stream(url: str, chat: str, run_id: str) -> list[Any]:
    """The ended run's stream from index 0 (one GET, no transport)."""
    answer = httpx.get(f"{url}/v1/workflow/gpt/{chat}/{run_id}/stream?startIndex=0", timeout=30)
    assert answer.status_code == 200
    return sse_chunks(answer.content)


def text_of(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def test_a_cut_stream_is_resumed_by_the_transport_with_every_chunk_once(
    live: tuple[ScriptedUpstream, str, CuttableProxy],
) -> None:
    upstream, url, proxy = live
    script = upstream.queue(Script(TURN, gate_at=GATE_AT))
    api = f"{proxy.url}/v1/workflow/gpt/t1"
    transport = start({"mode": "send", "api": api, "chatId": "t1", "messages": MESSAGES})
    post = transport.until(lambda r: r["event"] == "request")
    assert post["method"] == "POST" and post["status"] == 200 and post["runId"]
    run_id = post["runId"]
    transport.until(lambda r: r["event"] == "chunk" and r["chunk"].get("delta") == "in ")
    assert script.reached.wait(_WAIT)
    had = len(transport.chunks)
    proxy.cut()
    script.gate.set()
    end = transport.finish()

    gets = transport.requests[1:]
    assert gets, "the transport did not resume"
    assert gets[0]["url"] == f"{api}/{run_id}/stream?startIndex={had}"
    assert all(g["status"] == 200 for g in gets)
    whole = whole_stream(url, "t1", run_id)
    assert transport.chunks == whole
    assert end["chunks"] == len(whole)
    assert whole[0]["type"] == "start" and whole[-1]["type"] == "finish"
    assert text_of(end["message"]) == "".join(TEXT)
    assert len(upstream.requests) == 1


def test_a_negative_start_index_reads_the_tail_of_a_live_run_then_goes_on(
    live: tuple[ScriptedUpstream, str, CuttableProxy],
) -> None:
    upstream, url, _proxy = live
    script = upstream.queue(Script(TURN, gate_at=GATE_AT))
    api = f"{url}/v1/workflow/gpt/t2"
    first = start({"mode": "send", "api": api, "chatId": "t2", "messages": MESSAGES})
    run_id = first.until(lambda r: r["event"] == "request")["runId"]
    first.until(lambda r: r["event"] == "chunk" and r["chunk"].get("delta") == "in ")
    assert script.reached.wait(_WAIT)
    stream_url = f"{api}/{run_id}/stream"
    tail = start(
        {"mode": "reconnect", "api": api, "chatId": "t2", "startIndex": -2, "streamUrl": stream_url}
    )
    get = tail.until(lambda r: r["event"] == "request")
    assert get["url"] == f"{stream_url}?startIndex=-2"
    assert get["tailIndex"] is not None
    tail_index = int(get["tailIndex"])
    assert 1 <= tail_index < len(first.chunks)
    tail.until(lambda r: r["event"] == "chunk")  # the stored tail came before the gate opened
    script.gate.set()
    first.finish()
    tail.finish()
    whole = whole_stream(url, "t2", run_id)
    assert first.chunks == whole
    assert tail.chunks == whole[tail_index + 1 - 2 :]


def test_start_indexes_on_an_ended_run(live: tuple[ScriptedUpstream, str, CuttableProxy]) -> None:
    upstream, url, _proxy = live
    upstream.queue(Script(TURN))
    api = f"{url}/v1/workflow/gpt/t3"
    first = start({"mode": "send", "api": api, "chatId": "t3", "messages": MESSAGES})
    first.finish()
    run_id = first.requests[0]["runId"]
    whole = whole_stream(url, "t3", run_id)
    assert first.chunks == whole
    stream_url = f"{api}/{run_id}/stream"
    for index, expected, tail_header in (
        (-3, whole[-3:], str(len(whole) - 1)),
        (-1000, whole, str(len(whole) - 1)),
        (5, whole[5:], None),
    ):
        again = start(
            {
                "mode": "reconnect",
                "api": api,
                "chatId": "t3",
                "startIndex": index,
                "streamUrl": stream_url,
            }
        )
        again.finish()
        assert again.requests[0]["tailIndex"] == tail_header
        assert again.chunks == expected, index


def test_refusals(live: tuple[ScriptedUpstream, str, CuttableProxy]) -> None:
    upstream, url, _proxy = live
    upstream.queue(Script(TURN))
    body = {"messages": MESSAGES}
    with httpx.Client(base_url=url, timeout=30) as client:
        answer = client.post("/v1/workflow/gpt/t4", json=body)
        assert answer.status_code == 200
        run_id = answer.headers["x-workflow-run-id"]
        assert answer.headers["x-agui-run-id"] == run_id
        assert answer.headers["x-agui-thread-id"] == "t4"
        cases = [
            (f"/v1/workflow/gpt/t4/{run_id}/stream?startIndex=x", 400, "INVALID_PARAMETER"),
            (f"/v1/workflow/gpt/t4/{run_id}/stream?startIndex=1.5", 400, "INVALID_PARAMETER"),
            (f"/v1/workflow/gpt/other/{run_id}/stream?startIndex=0", 404, "RUN_NOT_FOUND"),
            ("/v1/workflow/gpt/t4/run_missing/stream?startIndex=0", 404, "RUN_NOT_FOUND"),
            (f"/v1/workflow/nope/t4/{run_id}/stream?startIndex=0", 404, None),
        ]
        for path, status, code in cases:
            got = client.get(path)
            assert got.status_code == status, (path, got.text)
            if code is not None:
                assert got.json()["error"]["code"] == code, path
        other = client.post("/v1/workflow/gpt/t4", json={**body, "id": "t5"})
        assert other.status_code == 400
        assert other.json()["error"]["code"] == "INVALID_PARAMETER"
        # the chat id in the run's place: the chat's active run, none here
        assert client.get("/v1/workflow/gpt/t4/t4/stream?startIndex=0").status_code == 204


# -- a continuation (issue 11 kind 4) --------------------------------------------------------
# The ai v6 tool-approval flow: the chat sends its assistant message with the answered
# approvals last; the AI SDK backend (``streamText``) answers the earlier calls right after
# ``start`` (``ai`` 6.0.326 ``src/generate-text/stream-text.ts``), then its step. The client
# sets the parts of the message it continues (``process-ui-message-stream.ts``
# ``getToolInvocation``), so these chunks must reach it once each, resumed or not.
SDK_ROUTE = "sdk6"
PREVIOUS = {
    "id": "assistant-7",
    "role": "assistant",
    "parts": [
        {"type": "step-start"},
        *(
            {
                "type": "tool-delete_file",
                "toolCallId": cid,
                "state": "approval-responded",
                "input": {"path": f"/tmp/{cid}"},
                "approval": {"id": f"ap-{cid}", "approved": approved},
            }
            for cid, approved in (("c0", False), ("c1", True))
        ),
    ],
}
EARLIER = [
    {"type": "tool-output-denied", "toolCallId": "c0"},
    {"type": "tool-output-available", "toolCallId": "c1", "output": {"deleted": True}},
]
ANSWER = [
    {"type": "start", "messageId": "assistant-7"},
    *EARLIER,
    {"type": "start-step"},
    {"type": "text-start", "id": "t1"},
    *({"type": "text-delta", "id": "t1", "delta": d} for d in ("Done", ": one ", "file.")),
    {"type": "text-end", "id": "t1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]


@pytest.fixture
def live_sdk(tmp_path: Path) -> Iterator[tuple[ScriptedUpstream, str, CuttableProxy]]:
    """As :func:`live`, with an AI SDK backend route ``sdk6`` (ai 6 clients) on the upstream."""
    require_workflow_harness()
    with ScriptedUpstream() as upstream:
        extra = (
            f'[[routes]]\nname = "{SDK_ROUTE}"\nupstream_url = "{upstream.base_url}/chat"\n'
            'protocol = "ai-sdk"\nai_sdk_major = 6\n'
        )
        with serve_gateway(
            tmp_path, upstream.base_url, cors_origin="http://127.0.0.1", extra_routes=extra
        ) as url:
            parts = urlsplit(url)
            assert parts.hostname is not None and parts.port is not None
            with CuttableProxy((parts.hostname, parts.port)) as proxy:
                yield upstream, url, proxy


@pytest.mark.parametrize("gate_at", [1, 2], ids=["cut-before-the-results", "cut-between-them"])
def test_a_cut_continuation_is_resumed_with_the_earlier_calls_results_once(
    live_sdk: tuple[ScriptedUpstream, str, CuttableProxy], gate_at: int
) -> None:
    """The continuation cut after ``start`` (the resume carries both results) or after the
    first result (one came live, the other with the resume): the transport yields each
    earlier call's output once, and ``ai`` 6 ends the continued message with both calls
    answered and the text once; the upstream was called once for the continuation."""
    upstream, url, proxy = live_sdk
    # the turn that asked for the approvals PREVIOUS answers (an answer to an interrupt never
    # raised is 422 UNKNOWN_INTERRUPT)
    calls = [(cid, "delete_file", {"path": f"/tmp/{cid}"}) for cid in ("c0", "c1")]
    upstream.queue(Script(approval_sse(approval_turn("assistant-7", calls))))
    asked = httpx.post(
        f"{url}/v1/workflow/{SDK_ROUTE}/t9",
        json={"id": "t9", "trigger": "submit-message", "messages": MESSAGES},
        timeout=_WAIT,
    )
    assert asked.status_code == 200 and asked.text.count('"tool-approval-request"') == 2
    body = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in ANSWER] + [b"data: [DONE]\n\n"]
    script = upstream.queue(Script(body, gate_at=gate_at))
    api = f"{proxy.url}/v1/workflow/{SDK_ROUTE}/t9"
    messages = [*MESSAGES, PREVIOUS]
    options = {"mode": "send", "api": api, "chatId": "t9", "messages": messages, "continues": True}
    transport = start(options)
    post = transport.until(lambda r: r["event"] == "request")
    assert post["method"] == "POST" and post["status"] == 200 and post["runId"]
    last_live = ANSWER[gate_at - 1]["type"]
    transport.until(lambda r: r["event"] == "chunk" and r["chunk"]["type"] == last_live)
    assert script.reached.wait(_WAIT)
    had = len(transport.chunks)
    proxy.cut()
    script.gate.set()
    end = transport.finish()

    gets = transport.requests[1:]
    assert gets, "the transport did not resume"
    assert gets[0]["url"] == f"{api}/{post['runId']}/stream?startIndex={had}"
    outputs = [c for c in transport.chunks if c["type"].startswith("tool-output-")]
    assert outputs == EARLIER  # each once, in the backend's order
    message = end["message"]
    assert message["id"] == "assistant-7"
    states = {p["toolCallId"]: p["state"] for p in message["parts"] if "toolCallId" in p}
    assert states == {"c0": "output-denied", "c1": "output-available"}
    (c1,) = [p for p in message["parts"] if p.get("toolCallId") == "c1"]
    assert c1["output"] == {"deleted": True}
    assert text_of(message) == "Done: one file."
    assert transport.chunks == whole_stream_on(url, SDK_ROUTE, "t9", post["runId"])
    assert len(upstream.requests) == 2  # the turn that asked, and the one continuation


def whole_stream_on(url: str, route: str, chat: str, run_id: str) -> list[Any]:
    """:func:`whole_stream` of a run on ``route``."""
    answer = httpx.get(f"{url}/v1/workflow/{route}/{chat}/{run_id}/stream?startIndex=0", timeout=30)
    assert answer.status_code == 200
    return sse_chunks(answer.content)
