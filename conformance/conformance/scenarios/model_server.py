"""A scripted model server on loopback speaking OpenAI Chat Completions, OpenAI Responses and
Anthropic Messages (streaming), for the adapters under test to call.

Endpoints (with or without the ``/v1`` prefix): ``POST /chat/completions`` (SSE of
``chat.completion.chunk`` objects, ``data: [DONE]``; OpenAI API reference, "Streaming"),
``POST /responses`` (SSE of ``response.*`` events with ``sequence_number``) and
``POST /messages`` (SSE ``event:`` + ``data:`` of ``message_start`` ... ``message_stop``;
Anthropic "Streaming Messages"). A non-streaming request is answered 400.

Which script: the last user message that contains ``scenario: <name>`` names the scenario;
the turn is the number of assistant turns after it (the adapter's previous requests). A turn
past the script's end repeats its last turn. Every request is logged in :attr:`requests`
(``(api, scenario, turn)``); a client that goes away mid-stream is counted in
:attr:`disconnects`. :class:`~conformance.scenarios.scripts.Abort` ends the response without
its end (the chunked body is cut: the client sees a broken connection).

Stdlib only (``http.server``), one thread per request.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from .scripts import SCENARIOS, Abort, Call, Calls, Reasoning, Scenario, Text, Turn

__all__ = ["ModelServer"]

_NAME: Final = re.compile(r"scenario:\s*([a-z0-9-]+)")
_DELAY_S: Final = 0.02
"""Pause between two deltas of the ``cancel`` scenario (400 deltas: 8 s), so that an adapter
that stops its model request when the client goes away is seen to, even on a loaded machine."""


class _Cut(Exception):
    """The script aborts the connection."""


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def _pick(items: list[Any], is_user: Any, is_assistant: Any, text: Any) -> tuple[str, int]:
    """(scenario, turn) from a conversation: the last user item naming a scenario, and the
    assistant turns after it."""
    for at in range(len(items) - 1, -1, -1):
        item = items[at]
        if is_user(item):
            found = _NAME.search(text(item))
            if found:
                turn = sum(1 for later in items[at + 1 :] if is_assistant(later))
                return found.group(1), turn
    return "plain-text", 0


def _chat_pick(body: dict[str, Any]) -> tuple[str, int]:
    messages = body.get("messages") or []
    return _pick(
        messages,
        lambda m: isinstance(m, dict) and m.get("role") == "user",
        lambda m: isinstance(m, dict) and m.get("role") == "assistant",
        lambda m: _texts(m.get("content")),
    )


def _responses_pick(body: dict[str, Any]) -> tuple[str, int]:
    items = body.get("input")
    if isinstance(items, str):
        found = _NAME.search(items)
        return (found.group(1) if found else "plain-text"), 0
    items = items or []
    grouped: list[Any] = []
    for item in items:  # one assistant turn per run of function calls / assistant messages
        kind = (
            "assistant"
            if item.get("type") == "function_call" or item.get("role") == "assistant"
            else "x"
        )
        if kind == "assistant" and grouped and grouped[-1] == "assistant":
            continue
        grouped.append(kind if kind == "assistant" else item)
    return _pick(
        grouped,
        lambda i: isinstance(i, dict) and i.get("role") == "user",
        lambda i: i == "assistant",
        lambda i: _texts(i.get("content")),
    )


def _messages_pick(body: dict[str, Any]) -> tuple[str, int]:
    return _pick(
        body.get("messages") or [],
        lambda m: isinstance(m, dict) and m.get("role") == "user",
        lambda m: isinstance(m, dict) and m.get("role") == "assistant",
        lambda m: _texts(m.get("content")),
    )


def _pieces(calls: Calls) -> Iterator[tuple[int, Call, int]]:
    """(index, call, piece number) in the order the script sends argument pieces."""
    if not calls.interleave:
        for index, call in enumerate(calls.calls):
            for n in range(len(call.pieces)):
                yield index, call, n
        return
    longest = max(len(c.pieces) for c in calls.calls)
    for n in range(longest):
        for index, call in enumerate(calls.calls):
            if n < len(call.pieces):
                yield index, call, n


# -- OpenAI Chat Completions ---------------------------------------------------------------------
def _chat(turn: Turn, slow: bool) -> Iterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    yield chunk({"role": "assistant", "content": ""})
    finish = "stop"
    for part in turn:
        if isinstance(part, Abort):
            raise _Cut
        if isinstance(part, Text):
            for piece in part.pieces:
                yield chunk({"content": piece})
                if slow:
                    time.sleep(_DELAY_S)
        elif isinstance(part, Reasoning):
            for piece in part.pieces:
                yield chunk({"reasoning_content": piece})
        elif isinstance(part, Calls):
            finish = "tool_calls"
            for index, call, n in _pieces(part):
                fn: dict[str, Any] = {"arguments": call.pieces[n]}
                entry: dict[str, Any] = {"index": index, "function": fn}
                if n == 0:
                    entry.update(id=call.id, type="function")
                    fn["name"] = call.name
                yield chunk({"tool_calls": [entry]})
    yield chunk({}, finish)
    usage = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    yield b"data: " + json.dumps(usage).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


# -- Anthropic Messages --------------------------------------------------------------------------
def _messages(turn: Turn, slow: bool) -> Iterator[bytes]:
    def event(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()

    usage = {"input_tokens": 1, "output_tokens": 1}
    message: dict[str, Any] = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "scripted",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield event("message_start", {"message": message})
    index, stop = 0, "end_turn"
    for part in turn:
        if isinstance(part, Abort):
            raise _Cut
        if isinstance(part, Text | Reasoning):
            thinking = isinstance(part, Reasoning)
            block = (
                {"type": "thinking", "thinking": ""} if thinking else {"type": "text", "text": ""}
            )
            yield event("content_block_start", {"index": index, "content_block": block})
            for piece in part.pieces:
                delta = (
                    {"type": "thinking_delta", "thinking": piece}
                    if thinking
                    else {"type": "text_delta", "text": piece}
                )
                yield event("content_block_delta", {"index": index, "delta": delta})
                if slow:
                    time.sleep(_DELAY_S)
            if thinking:
                sig = {"type": "signature_delta", "signature": "c2NyaXB0ZWQ="}
                yield event("content_block_delta", {"index": index, "delta": sig})
            yield event("content_block_stop", {"index": index})
            index += 1
        elif isinstance(part, Calls):
            stop = "tool_use"
            for call in part.calls:  # Anthropic streams one block after the other
                tool: dict[str, Any] = {"type": "tool_use", "id": call.id, "name": call.name}
                tool["input"] = {}
                yield event("content_block_start", {"index": index, "content_block": tool})
                for piece in call.pieces:
                    delta = {"type": "input_json_delta", "partial_json": piece}
                    yield event("content_block_delta", {"index": index, "delta": delta})
                yield event("content_block_stop", {"index": index})
                index += 1
    yield event(
        "message_delta",
        {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}},
    )
    yield event("message_stop", {})


# -- OpenAI Responses ----------------------------------------------------------------------------
def _responses(turn: Turn, slow: bool) -> Iterator[bytes]:
    seq = iter(range(1_000_000))

    def event(name: str, data: dict[str, Any]) -> bytes:
        body = {"type": name, "sequence_number": next(seq), **data}
        return f"event: {name}\ndata: {json.dumps(body)}\n\n".encode()

    def response(status: str, output: list[Any]) -> dict[str, Any]:
        return {
            "id": "resp_scripted",
            "object": "response",
            "created_at": 0,
            "status": status,
            "model": "scripted",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": 1,
                "output_tokens": 1,
                "total_tokens": 2,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    yield event("response.created", {"response": response("in_progress", [])})
    output: list[dict[str, Any]] = []
    for part in turn:
        if isinstance(part, Abort):
            raise _Cut
        at = len(output)
        if isinstance(part, Text):
            item_id = f"msg_{at}"
            item: dict[str, Any] = {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            yield event("response.output_item.added", {"output_index": at, "item": item})
            empty = {"type": "output_text", "text": "", "annotations": []}
            yield event(
                "response.content_part.added",
                {"item_id": item_id, "output_index": at, "content_index": 0, "part": empty},
            )
            for piece in part.pieces:
                yield event(
                    "response.output_text.delta",
                    {
                        "item_id": item_id,
                        "output_index": at,
                        "content_index": 0,
                        "delta": piece,
                        "logprobs": [],
                    },
                )
                if slow:
                    time.sleep(_DELAY_S)
            full = {"type": "output_text", "text": part.text, "annotations": []}
            yield event(
                "response.output_text.done",
                {
                    "item_id": item_id,
                    "output_index": at,
                    "content_index": 0,
                    "text": part.text,
                    "logprobs": [],
                },
            )
            yield event(
                "response.content_part.done",
                {"item_id": item_id, "output_index": at, "content_index": 0, "part": full},
            )
            item = {**item, "status": "completed", "content": [full]}
            yield event("response.output_item.done", {"output_index": at, "item": item})
            output.append(item)
        elif isinstance(part, Reasoning):
            item_id = f"rs_{at}"
            item = {"type": "reasoning", "id": item_id, "summary": []}
            yield event("response.output_item.added", {"output_index": at, "item": item})
            text = "".join(part.pieces)
            summary = {"type": "summary_text", "text": ""}
            yield event(
                "response.reasoning_summary_part.added",
                {"item_id": item_id, "output_index": at, "summary_index": 0, "part": summary},
            )
            for piece in part.pieces:
                yield event(
                    "response.reasoning_summary_text.delta",
                    {"item_id": item_id, "output_index": at, "summary_index": 0, "delta": piece},
                )
            yield event(
                "response.reasoning_summary_text.done",
                {"item_id": item_id, "output_index": at, "summary_index": 0, "text": text},
            )
            done = {"type": "summary_text", "text": text}
            yield event(
                "response.reasoning_summary_part.done",
                {"item_id": item_id, "output_index": at, "summary_index": 0, "part": done},
            )
            item = {**item, "summary": [done]}
            yield event("response.output_item.done", {"output_index": at, "item": item})
            output.append(item)
        elif isinstance(part, Calls):
            items: list[dict[str, Any]] = []
            for n, call in enumerate(part.calls):
                item = {
                    "type": "function_call",
                    "id": f"fc_{at + n}",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": "",
                    "status": "in_progress",
                }
                items.append(item)
                yield event("response.output_item.added", {"output_index": at + n, "item": item})
            for index, call, n in _pieces(part):
                yield event(
                    "response.function_call_arguments.delta",
                    {
                        "item_id": f"fc_{at + index}",
                        "output_index": at + index,
                        "delta": call.pieces[n],
                    },
                )
            for n, call in enumerate(part.calls):
                args = "".join(call.pieces)
                yield event(
                    "response.function_call_arguments.done",
                    {"item_id": f"fc_{at + n}", "output_index": at + n, "arguments": args},
                )
                item = {**items[n], "arguments": args, "status": "completed"}
                yield event("response.output_item.done", {"output_index": at + n, "item": item})
                output.append(item)
    yield event("response.completed", {"response": response("completed", output)})


_APIS: Final = {
    "/chat/completions": ("openai-chat", _chat_pick, _chat),
    "/responses": ("openai-responses", _responses_pick, _responses),
    "/messages": ("anthropic", _messages_pick, _messages),
}


class ModelServer:
    """The scripted model server (a context manager: serving while inside ``with``).

    Args:
        port: TCP port on 127.0.0.1 (0: any free port).
        scenarios: the scripts, by name (default :data:`~conformance.scenarios.scripts.SCENARIOS`).

    Attributes:
        url: ``http://127.0.0.1:<port>`` once started; the APIs are under ``url`` and
            ``url + "/v1"``.
        requests: ``(api, scenario, turn)`` of every model request, in order.
        disconnects: ``scenario -> count`` of clients that went away mid-stream.
        completed: ``scenario -> count`` of responses written to their end.
    """

    def __init__(self, port: int = 0, scenarios: dict[str, Scenario] | None = None) -> None:
        self.scenarios = scenarios or SCENARIOS
        self.requests: list[tuple[str, str, int]] = []
        self.disconnects: dict[str, int] = {}
        self.completed: dict[str, int] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ModelServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def served(self, scenario: str) -> list[int]:
        """The turns of ``scenario`` served so far, in order."""
        with self._lock:
            return [turn for _, name, turn in self.requests if name == scenario]

    def turn(self, scenario: str, n: int) -> Turn:
        """Turn ``n`` of ``scenario`` (the last one past the end)."""
        turns = self.scenarios[scenario].turns
        return turns[min(n, len(turns) - 1)]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0].removeprefix("/v1")
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        api = _APIS.get(path)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if api is None or not isinstance(body, dict) or not body.get("stream"):
            error = {"message": "streaming requests only", "type": "invalid_request_error"}
            self._reply(handler, 404 if api is None else 400, {"error": error})
            return
        name, pick, render = api
        scenario, turn = pick(body)
        if scenario not in self.scenarios:
            scenario = "plain-text"
        with self._lock:
            self.requests.append((name, scenario, turn))
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        slow = self.scenarios[scenario].cancel
        try:
            for piece in render(self.turn(scenario, turn), slow):
                handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
            with self._lock:
                self.completed[scenario] = self.completed.get(scenario, 0) + 1
        except _Cut:
            handler.close_connection = True
            handler.wfile.flush()
            handler.connection.shutdown(2)
        except (BrokenPipeError, ConnectionResetError):
            with self._lock:
                self.disconnects[scenario] = self.disconnects.get(scenario, 0) + 1
            handler.close_connection = True

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
