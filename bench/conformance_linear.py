"""The conformance kit checks a 5 MB stream in linear time (issue 17).

Builds streams of about 5 MB in the shapes that used to be slow or could be (AI SDK with LF
framing: the splitter searched for a CR to the end of the body at every line; one event of
several MB fed in 64 KiB reads; thousands of tool calls), checks each whole (``check_bytes``)
and fed in 64 KiB pieces (as a live run reads it), and prints the time, the throughput and
the ratio to an anchor measured in the same run on the same bytes: ``json.loads`` of every
payload (the least any checker must do). A linear checker keeps the ratio flat as the size
doubles; the size-doubling column shows it.

    .venv/bin/python bench/conformance_linear.py [--mb 5]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from conformance import check_bytes
from conformance.inputs import make_checker

PIECE = 64 * 1024


def _frame(events: list[Any], crlf: bool = False, done: bool = False) -> bytes:
    sep = "\r\n" if crlf else "\n"
    out = [f"data: {json.dumps(e, separators=(',', ':'))}{sep}{sep}" for e in events]
    if done:
        out.append(f"data: [DONE]{sep}{sep}")
    return "".join(out).encode()


def _count(size: int, one: Any) -> int:
    return max(1, size // len(_frame([one])))


def agui_text(size: int) -> bytes:
    n = _count(size, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "word " * 8})
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
    events: list[Any] = [
        start,
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    ]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "word " * 8}] * n
    events += [
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    return _frame(events)


def agui_one_big_argument(size: int) -> bytes:
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
    args = json.dumps({"blob": "x" * size})
    events = [
        start,
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": args},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    return _frame(events)


def ai_sdk_text(size: int, crlf: bool = False) -> bytes:
    n = _count(size, {"type": "text-delta", "id": "t", "delta": "word " * 5})
    chunks: list[Any] = [{"type": "start"}, {"type": "text-start", "id": "t"}]
    chunks += [{"type": "text-delta", "id": "t", "delta": "word " * 5}] * n
    chunks += [{"type": "text-end", "id": "t"}, {"type": "finish"}]
    return _frame(chunks, crlf=crlf, done=True)


def ai_sdk_many_tools(size: int) -> bytes:
    n = size // 420
    chunks: list[Any] = [{"type": "start"}]
    for i in range(n):
        cid = f"call_{i}"
        chunks += [
            {"type": "tool-input-start", "toolCallId": cid, "toolName": "f"},
            {"type": "tool-input-delta", "toolCallId": cid, "inputTextDelta": "{}"},
            {"type": "tool-input-available", "toolCallId": cid, "toolName": "f", "input": {}},
            {"type": "tool-output-available", "toolCallId": cid, "output": "ok"},
        ]
    chunks.append({"type": "finish"})
    return _frame(chunks, done=True)


SHAPES: dict[str, tuple[str, Callable[[int], bytes]]] = {
    "agui text deltas": ("agui", agui_text),
    "agui one 5 MB argument": ("agui", agui_one_big_argument),
    "ai-sdk text, LF": ("ai-sdk", ai_sdk_text),
    "ai-sdk text, CRLF": ("ai-sdk", lambda s: ai_sdk_text(s, crlf=True)),
    "ai-sdk many tool calls": ("ai-sdk", ai_sdk_many_tools),
}


def _anchor(body: bytes) -> float:
    start = time.process_time()
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        if block.startswith(b"data: {"):
            json.loads(block[6:])
    return time.process_time() - start


def _whole(body: bytes, protocol: str) -> float:
    start = time.process_time()
    check_bytes(body, protocol=protocol)  # type: ignore[arg-type]
    return time.process_time() - start


def _pieces(body: bytes, protocol: str) -> float:
    start = time.process_time()
    checker = make_checker(protocol)  # type: ignore[arg-type]
    for at in range(0, len(body), PIECE):
        checker.feed(body[at : at + PIECE])
    checker.close()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=5.0)
    size = int(parser.parse_args().mb * 1024 * 1024)
    print(
        f"{'shape':<26} {'MB':>5} {'whole s':>8} {'64K s':>7} {'MB/s':>6} "
        f"{'x json.loads':>12} {'half-size s':>11} {'doubling':>8}"
    )
    for name, (protocol, make) in SHAPES.items():
        body, half = make(size), make(size // 2)
        whole, pieces, anchor = _whole(body, protocol), _pieces(body, protocol), _anchor(body)
        half_time = _whole(half, protocol)
        mb = len(body) / 1e6
        print(
            f"{name:<26} {mb:>5.1f} {whole:>8.3f} {pieces:>7.3f} {mb / whole:>6.1f} "
            f"{whole / anchor:>12.1f} {half_time:>11.3f} {whole / half_time:>8.2f}"
        )


if __name__ == "__main__":
    main()
