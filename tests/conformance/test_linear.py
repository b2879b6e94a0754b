"""Every checker path is linear in its input (issue 17): large inputs, fed whole and in small
reads, give the same verdict as small ones. Times are measured in bench/conformance_linear.py,
not here (no timing assertions)."""

from __future__ import annotations

import json

from diffcorpus import frame

from conformance import AguiChecker, AiSdkChecker, check_bytes
from conformance.framing import AguiSplitter, EventSourceSplitter

RS = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
RF = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def _feed(splitter: AguiSplitter | EventSourceSplitter, body: bytes, piece: int) -> list[str]:
    out = [
        p.text for at in range(0, len(body), piece) for p in splitter.feed(body[at : at + piece])
    ]
    return out + [p.text for p in splitter.close()]


def test_one_event_of_two_megabytes_in_one_kilobyte_reads() -> None:
    """The AG-UI splitter used to re-split its whole buffer at every read."""
    data = "x" * (2 * 1024 * 1024)
    for ending in (b"\n\n", b"\r\n\r\n"):
        body = b"data: " + data.encode() + ending + b"data: 1" + ending
        assert _feed(EventSourceSplitter(), body, 1024) == [data, "1"]
    assert _feed(AguiSplitter(), b"data: " + data.encode() + b"\n\ndata: 1\n\n", 1024) == [
        data,
        "1",
    ]


def test_many_lf_events_read_by_the_eventsource_splitter() -> None:
    """It used to search for a CR to the end of the body at every line (LF framing)."""
    body = frame([{"type": "text-delta", "id": "t", "delta": str(n)} for n in range(50_000)])
    texts = _feed(EventSourceSplitter(), body, 65536)
    assert len(texts) == 50_000 and json.loads(texts[-1])["delta"] == "49999"


def test_large_ai_sdk_stream_with_many_tool_calls_and_metadata() -> None:
    chunks: list[object] = [{"type": "start", "messageMetadata": {"n": 0}}]
    for n in range(5_000):
        cid = f"c{n}"
        chunks += [
            {"type": "tool-input-available", "toolCallId": cid, "toolName": "f", "input": {}},
            {"type": "tool-output-available", "toolCallId": cid, "output": n},
            {"type": "message-metadata", "messageMetadata": {f"k{n}": {"v": n}}},
        ]
    chunks.append({"type": "finish"})
    body = frame(chunks, done=True)
    checker = AiSdkChecker(7)
    for at in range(0, len(body), 4096):
        checker.feed(body[at : at + 4096])
    checker.close()
    assert checker.report.violations == []
    assert checker._tracker.metadata["k4999"] == {"v": 4999}  # merged, not replaced


def test_large_agui_stream_whole_and_in_reads_agree() -> None:
    events = [RS, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "w "}] * 30_000
    events += [{"type": "TEXT_MESSAGE_END", "messageId": "m"}, RF]
    body = frame(events)
    whole = check_bytes(body, protocol="agui")
    checker = AguiChecker()
    for at in range(0, len(body), 777):
        checker.feed(body[at : at + 777])
    checker.close()
    assert whole.violations == checker.report.violations == []
    assert whole.events == checker.report.events == len(events)
