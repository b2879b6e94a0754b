"""A thread's history as the clients load it (pure): AI SDK ``UIMessage[]``, AG-UI ``Message[]``.

``GET /api/v1/agent/history?threadId=&format=ai-sdk|agui`` answers what ``useChat({messages})``
(``ai`` 5/6/7 ``UIMessage``, checked by ``validateUIMessages``) and ``new HttpAgent({
initialMessages})`` (``@ag-ui/core`` 1.0 ``MessageSchema``) take as they are:

* ids are the stream's: an assistant ``UIMessage`` has the id of the run's ``start.messageId``
  (the history item id, :mod:`gateway.runs.history`); AG-UI messages keep the event ids;
* AI SDK tool results are inside their tool part (``state: "output-available"``, ``output``),
  also when the result came in a later request (a client tool's output, posted as a ``tool``
  message): never a separate item after the follow-up text;
* ``format=agui`` includes the active run's messages as far as they are stored (a re-join's
  MESSAGES_SNAPSHOT replaces them); ``format=ai-sdk`` leaves the active run's assistant message
  out, because ``resume: true`` replays that run from its first chunk into the chat
  (``docs/runs.md`` §5) and a message already holding its id would get every part twice. The
  runs endpoint names the active run (status ``running``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..store.models import JsonObject

__all__ = ["ui_messages"]

_UI_ROLES = {"user": "user", "system": "system", "developer": "system"}


def _input_part(piece: Any) -> JsonObject | None:
    """One AG-UI input content part as a UIMessage part (text; a binary with a URL or data is a
    ``file`` part; anything else has no UIMessage form)."""
    if not isinstance(piece, dict):
        return None
    if piece.get("type") == "text":
        return {"type": "text", "text": str(piece.get("text") or "")}
    if piece.get("type") == "binary":
        media = str(piece.get("mimeType") or "application/octet-stream")
        url = piece.get("url") or (
            f"data:{media};base64,{piece['data']}" if isinstance(piece.get("data"), str) else None
        )
        if url:
            part: JsonObject = {"type": "file", "mediaType": media, "url": str(url)}
            if piece.get("filename"):
                part["filename"] = str(piece["filename"])
            return part
    return None


def _tool_part(part: JsonObject) -> JsonObject:
    name = str(part.get("toolName") or "")
    dynamic = bool(part.get("dynamic"))
    out: JsonObject = (
        {"type": "dynamic-tool", "toolName": name} if dynamic else {"type": f"tool-{name}"}
    )
    out["toolCallId"] = str(part.get("toolCallId"))
    state = str(part.get("state") or "input-available")
    out["state"] = state
    if "input" in part:
        out["input"] = part["input"]
    elif state != "input-streaming":
        out["input"] = {}
    if state == "output-available":
        out["output"] = part.get("output")
    if state == "output-error":
        out["errorText"] = str(part.get("errorText") or part.get("output") or "error")
    if part.get("providerExecuted"):
        out["providerExecuted"] = True
    return out


def _source_part(part: JsonObject) -> JsonObject | None:
    if part.get("sourceType") == "document":
        return {
            "type": "source-document",
            "sourceId": str(part.get("sourceId") or ""),
            "mediaType": str(part.get("mediaType") or "application/octet-stream"),
            "title": str(part.get("title") or ""),
        }
    if part.get("url"):
        out: JsonObject = {
            "type": "source-url",
            "sourceId": str(part.get("sourceId") or ""),
            "url": str(part["url"]),
        }
        if part.get("title"):
            out["title"] = str(part["title"])
        return out
    return None


def _assistant_parts(item: JsonObject) -> list[JsonObject]:
    parts: list[JsonObject] = [{"type": "step-start"}] if item.get("runId") else []
    for part in item.get("parts") or ():
        kind = part.get("type")
        if kind in ("text", "reasoning"):
            state = "streaming" if part.get("state") == "streaming" else "done"
            parts.append({"type": kind, "text": str(part.get("text") or ""), "state": state})
        elif kind == "tool":
            parts.append(_tool_part(part))
        elif kind == "source":
            source = _source_part(part)
            if source is not None:
                parts.append(source)
    return parts


def ui_messages(items: Iterable[JsonObject], *, skip_runs: Iterable[str] = ()) -> list[JsonObject]:
    """AI SDK ``UIMessage`` objects for history items, oldest first.

    Args:
        items: history items (:mod:`gateway.runs.history`), oldest first.
        skip_runs: store keys of runs whose assistant items to leave out (the active run).

    Returns:
        ``{id, role: "user"|"system"|"assistant", parts, metadata?}`` each; assistant messages
        carry ``metadata: {runId, status}`` (``runId`` public). Consecutive assistant items
        with one id (a continuation) are one message; a tool result joins the part of its
        call (any earlier message), or, when no part holds the call, a ``dynamic-tool`` part.
    """
    skipped = set(skip_runs)
    out: list[JsonObject] = []
    tools: dict[str, JsonObject] = {}  # toolCallId -> the UI part holding it
    for item in items:
        role = item.get("role")
        if role in _UI_ROLES:
            content = item.get("content")
            pieces = (
                [{"type": "text", "text": content}]
                if isinstance(content, str)
                else content
                if isinstance(content, list)
                else item.get("parts") or ()
            )
            parts = [p for p in map(_input_part, pieces) if p is not None]
            out.append({"id": str(item["id"]), "role": _UI_ROLES[str(role)], "parts": parts})
            continue
        if item.get("runId") in skipped and role == "assistant":
            continue
        results = [p for p in item.get("parts") or () if p.get("type") == "tool-result"]
        for result in results:
            call_id = str(result.get("toolCallId"))
            holder = tools.get(call_id)
            if holder is None:
                holder = {"type": "dynamic-tool", "toolName": "", "toolCallId": call_id}
                holder["input"] = {}
                _append_assistant(out, str(item["id"]), [holder], None)
                tools[call_id] = holder
            holder["state"] = "output-available"
            holder["output"] = result.get("output")
        if role != "assistant":
            continue
        parts = _assistant_parts(item)
        if not [p for p in parts if p["type"] != "step-start"]:
            continue
        for part in parts:
            if isinstance(part.get("toolCallId"), str):
                tools[part["toolCallId"]] = part
        metadata = None
        if isinstance(item.get("runId"), str):
            metadata = {"runId": item["runId"], "status": item.get("status")}
        _append_assistant(out, str(item["id"]), parts, metadata)
    return out


def _append_assistant(
    out: list[JsonObject], message_id: str, parts: list[JsonObject], metadata: Any
) -> None:
    last = out[-1] if out else None
    if last is not None and last["role"] == "assistant" and last["id"] == message_id:
        last["parts"] += parts
        if metadata is not None:
            last["metadata"] = metadata
        return
    message: JsonObject = {"id": message_id, "role": "assistant", "parts": parts}
    if metadata is not None:
        message["metadata"] = metadata
    out.append(message)
