"""History items: the thread's messages as ``GET /api/v1/agent/history`` returns them (pure).

A history item is a JSON object::

    {"id", "role": "user"|"assistant"|"system"|"developer"|"tool", "runId"?,
     "parts": [...], "content"? (user/system/developer: the original AG-UI content),
     "status"? (assistant: the run's status), "error"? {code, message}, "usage"?,
     "visibility": {"history": bool, "context": bool}, "aliases": [AG-UI message ids]}

``parts`` are the ordered parts of :mod:`agui_codecs.core.fold` (text segments split around tool
calls, reasoning, tool calls with state, input and result). ``visibility`` is the mask of the
seed design: ``history`` = shown in the conversation UI, ``context`` = sent back to the model
when the next request is assembled. Decisions: system/developer input is context only; the
assistant output of a run that did not complete (failed, cancelled, interrupted) is shown but
kept out of the context; ``aliases`` is stored apart by the store (deduplication of echoed
input) and never returned.

One assistant item per run, with id = the run's assistant message id (the AI SDK
``start.messageId``; the run id by default, as :class:`agui_codecs.encoders.ai_sdk.AiSdkEncoder`
does), so a ``useChat`` message and its history item agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from agui_codecs.core import RunFold, parse_json_text

from ..store.models import JsonObject

__all__ = [
    "agui_messages_from_parts",
    "history_items_to_agui",
    "input_items",
    "run_item",
]

_BOTH = {"history": True, "context": True}
_CONTEXT_ONLY = {"history": False, "context": True}


def _args_text(part: JsonObject) -> str:
    if isinstance(part.get("inputText"), str):
        return str(part["inputText"])
    value = part.get("input")
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def _content_text(part: JsonObject) -> Any:
    if isinstance(part.get("outputText"), str):
        return part["outputText"]
    output = part.get("output")
    if isinstance(output, str | list):
        return output
    return orjson.dumps(output).decode()


def agui_messages_from_parts(
    parts: Iterable[JsonObject],
    *,
    skip_text: Iterable[str] = (),
    skip_reasoning: Iterable[str] = (),
    skip_tools: Iterable[str] = (),
) -> list[JsonObject]:
    """AG-UI 1.0 messages (wire dicts) the way ``@ag-ui/client`` builds them from the events.

    Mirrors ``src/apply/default.ts``: text and reasoning parts become messages keyed by their
    ``messageId`` (content concatenated); a tool call joins its ``ownerMessageId`` assistant
    message's ``toolCalls``; a result becomes a ``tool`` message inserted after the assistant
    message holding the call (after the tool messages already there).

    Args:
        parts: history parts in order.
        skip_text, skip_reasoning, skip_tools: ids to leave out (items still open, which a
            snapshot prelude re-opens with START events instead).
    """
    no_text, no_reasoning, no_tools = set(skip_text), set(skip_reasoning), set(skip_tools)
    out: list[JsonObject] = []
    by_id: dict[str, JsonObject] = {}

    def message(message_id: str, role: str) -> JsonObject:
        found = by_id.get(message_id)
        if found is None:
            found = {"id": message_id, "role": role}
            by_id[message_id] = found
            out.append(found)
        return found

    def add_result(owner_id: str | None, result: JsonObject) -> None:
        if result["id"] in by_id:
            return
        by_id[result["id"]] = result
        index = next((i for i, m in enumerate(out) if m["id"] == owner_id), None)
        if index is None:
            out.append(result)
            return
        index += 1
        while index < len(out) and out[index].get("role") == "tool":
            index += 1
        out.insert(index, result)

    for part in parts:
        kind = part.get("type")
        if kind == "text":
            mid = str(part.get("messageId"))
            if mid in no_text:
                continue
            msg = message(mid, str(part.get("role") or "assistant"))
            msg["content"] = str(msg.get("content") or "") + str(part.get("text") or "")
        elif kind == "reasoning":
            mid = str(part.get("messageId"))
            if mid in no_reasoning:
                continue
            msg = message(mid, "reasoning")
            msg["content"] = str(msg.get("content") or "") + str(part.get("text") or "")
            if part.get("encryptedValue") is not None:
                msg["encryptedValue"] = part["encryptedValue"]
        elif kind == "tool":
            call_id = str(part.get("toolCallId"))
            if call_id in no_tools:
                continue
            owner_id = str(part.get("ownerMessageId") or call_id)
            owner = message(owner_id, "assistant")
            call: JsonObject = {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": str(part.get("toolName") or ""),
                    "arguments": _args_text(part),
                },
            }
            if part.get("encryptedValue") is not None:
                call["encryptedValue"] = part["encryptedValue"]
            owner.setdefault("toolCalls", []).append(call)
            if part.get("resultMessageId") is not None and "output" in part:
                add_result(
                    owner_id,
                    {
                        "id": str(part["resultMessageId"]),
                        "role": "tool",
                        "toolCallId": call_id,
                        "content": _content_text(part),
                    },
                )
        elif kind == "tool-result":
            call_id = str(part.get("toolCallId"))
            holder: str | None = next(
                (m["id"] for m in out if any(c["id"] == call_id for c in m.get("toolCalls", ()))),
                None,
            )
            add_result(
                holder,
                {
                    "id": str(part.get("resultMessageId")),
                    "role": "tool",
                    "toolCallId": call_id,
                    "content": _content_text(part),
                },
            )
    for msg in out:
        if msg.get("role") == "assistant" and "content" not in msg and not msg.get("toolCalls"):
            msg["content"] = ""
    return out


def run_item(
    fold: RunFold,
    *,
    run_id: str,
    message_id: str | None = None,
    status: str,
) -> JsonObject | None:
    """The assistant history item of a finished run (None when it produced nothing).

    Args:
        fold: the run's fold, terminal event applied.
        run_id: the run id (``runId`` of the item).
        message_id: the item id (default ``run_id``).
        status: the run's terminal status.
    """
    terminal = fold.terminal or {}
    error = None
    if terminal.get("type") == "RUN_ERROR":
        error = {"code": terminal.get("code"), "message": terminal.get("message")}
    if not fold.parts and error is None:
        return None
    item: JsonObject = {
        "id": message_id or run_id,
        "role": "assistant",
        "runId": run_id,
        "parts": [dict(p) for p in fold.parts],
        "status": status,
        "visibility": {"history": True, "context": status == "completed" and bool(fold.parts)},
        "aliases": list(fold.aliases),
    }
    if error is not None:
        item["error"] = error
    if terminal.get("usage") is not None:
        item["usage"] = terminal["usage"]
    return item


def _input_parts(content: Any) -> list[JsonObject]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[JsonObject] = []
    for piece in content if isinstance(content, list) else ():
        if isinstance(piece, dict):
            if piece.get("type") == "text":
                parts.append({"type": "text", "text": str(piece.get("text") or "")})
            else:
                parts.append(dict(piece))
    return parts


def input_items(messages: Sequence[JsonObject], *, run_id: str | None = None) -> list[JsonObject]:
    """History items for the AG-UI messages of a ``RunAgentInput`` (wire dicts).

    User, system and developer messages keep their original ``content``; assistant messages
    the client sends become items with text and tool parts; tool messages become ``tool``
    items with a ``tool-result`` part; reasoning becomes an assistant item with a reasoning
    part; activity messages are not history. The store skips the items whose id it already
    knows (by id or alias), e.g. the gateway's own output echoed back.
    """
    items: list[JsonObject] = []
    for msg in messages:
        if not isinstance(msg, dict) or not isinstance(msg.get("id"), str):
            continue
        role = msg.get("role")
        item: JsonObject = {"id": msg["id"], "role": role}
        if run_id is not None:
            item["runId"] = run_id
        if role in ("user", "system", "developer"):
            item["content"] = msg.get("content", "")
            item["parts"] = _input_parts(msg.get("content", ""))
            item["visibility"] = dict(_BOTH if role == "user" else _CONTEXT_ONLY)
        elif role == "assistant":
            parts = _input_parts(msg.get("content") or "")
            for text in parts:
                if text["type"] == "text":
                    text.update(messageId=msg["id"], state="done")
            for call in msg.get("toolCalls") or ():
                fn = call.get("function") or {}
                parts.append(
                    {
                        "type": "tool",
                        "toolCallId": str(call.get("id")),
                        "toolName": str(fn.get("name") or ""),
                        "ownerMessageId": msg["id"],
                        "state": "input-available",
                        "input": parse_json_text(str(fn.get("arguments") or "")) or {},
                        "inputText": str(fn.get("arguments") or ""),
                    }
                )
            item["parts"] = parts
            item["visibility"] = dict(_BOTH)
        elif role == "tool":
            content = msg.get("content", "")
            output = parse_json_text(content) if isinstance(content, str) else content
            result: JsonObject = {
                "type": "tool-result",
                "toolCallId": str(msg.get("toolCallId")),
                "resultMessageId": msg["id"],
                "output": output,
            }
            if isinstance(content, str):
                result["outputText"] = content
            item["parts"] = [result]
            item["visibility"] = dict(_BOTH)
        elif role == "reasoning":
            item["role"] = "assistant"
            part: JsonObject = {
                "type": "reasoning",
                "messageId": msg["id"],
                "text": str(msg.get("content") or ""),
                "state": "done",
            }
            if msg.get("encryptedValue") is not None:
                part["encryptedValue"] = msg["encryptedValue"]
            item["parts"] = [part]
            item["visibility"] = dict(_BOTH)
        else:
            continue
        items.append(item)
    return items


def history_items_to_agui(items: Iterable[JsonObject]) -> list[JsonObject]:
    """AG-UI messages (wire dicts) for history items, e.g. the prior messages of a snapshot.

    User/system/developer items give their original content; assistant and tool items are
    rebuilt from their parts with :func:`agui_messages_from_parts`. Duplicated ids keep the
    first occurrence.
    """
    out: list[JsonObject] = []
    seen: set[str] = set()
    for item in items:
        role = item.get("role")
        if role in ("user", "system", "developer"):
            content = item.get("content")
            if content is None:
                content = "".join(
                    str(p.get("text") or "")
                    for p in item.get("parts") or ()
                    if p.get("type") == "text"
                )
            built = [{"id": item["id"], "role": role, "content": content}]
        else:
            built = agui_messages_from_parts(item.get("parts") or ())
        for msg in built:
            if msg["id"] not in seen:
                seen.add(msg["id"])
                out.append(msg)
    return out
