"""Chunk builders of the AI SDK encoder for parts without an AG-UI event of their own, and the
JSON sanitizer every chunk goes through (used by :mod:`agui_codecs.encoders.ai_sdk`).

Follows ``ai`` 7.0.173 / 6.0.326 / 5.0.277 ``src/ui-message-stream/ui-message-chunks.ts`` and
``@ai-sdk/provider-utils`` ``secure-json-parse.ts`` (see ``docs/protocols.md`` §1.2, §3):

* :func:`sanitize_proto` / :func:`chunk_bytes`: ``secureJsonParse`` rejects the whole stream on
  an own ``__proto__`` key anywhere, or a ``constructor`` key whose object value has a
  ``prototype`` key. Such keys are renamed (``__proto__`` → ``_proto_``; ``prototype`` →
  ``_prototype_`` inside that ``constructor`` object), after a byte pre-check so that clean
  chunks (nearly all) are serialized once.
* :func:`part_chunk`: the CUSTOM events carrying AI SDK parts (the convention of the ``ai-sdk``
  decoder, ARCHITECTURE.md) back to their chunks: ``source`` → ``source-url`` /
  ``source-document``; ``data-<name>`` {id?, data, transient?}; ``file`` {url, mediaType,
  providerMetadata?}; with ``ai_sdk_major >= 7`` also ``reasoning-file`` and ``custom``.
* :func:`interrupt_chunks`: the interrupts of RUN_FINISHED ``outcome: interrupt``.
  A tool approval (``reason: "tool_approval"`` with a ``toolCallId`` this stream announced)
  is a real ``tool-approval-request`` {approvalId, toolCallId} when ``ai_sdk_major >= 6`` (v5
  rejects the type); otherwise (portable output, or a call the client has no tool part for)
  it is the data part ``data-tool-approval-request`` {id: approvalId, data: {approvalId,
  toolCallId, toolName?, reason, message?}}, which v5, v6 and v7 keep on the message. Any
  other interrupt is the data part ``data-interrupt`` {id, data: {id, reason, message?,
  toolCallId?, responseSchema?, expiresAt?, metadata?}}.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from ..sse import encode_event, encode_json

__all__ = [
    "APPROVAL_DATA_PART",
    "DONE_FRAME",
    "INTERRUPT_DATA_PART",
    "chunk_bytes",
    "interrupt_chunks",
    "is_tool_approval",
    "part_chunk",
    "sanitize_proto",
]

APPROVAL_DATA_PART: Final = "data-tool-approval-request"
"""Chunk type of a tool approval in portable output (ai v5 has no ``tool-approval-request``)."""

INTERRUPT_DATA_PART: Final = "data-interrupt"
"""Chunk type of an interrupt that is not a tool approval."""

DONE_FRAME: Final = encode_event("[DONE]")
"""``data: [DONE]`` and the blank line: the end of a UI message stream (docs/protocols.md
§3.1; not JSON, ``parse-json-event-stream.ts`` skips it)."""

# Keys as orjson writes them (compact, never escaped): a clean chunk has none of them.
_PROTO: Final = b'"__proto__":'
_CONSTRUCTOR: Final = b'"constructor":'
_PROTOTYPE: Final = b'"prototype":'


def sanitize_proto(value: Any) -> Any:
    """Return ``value`` without the keys ``secureJsonParse`` rejects.

    Every ``__proto__`` object key becomes ``_proto_``; in an object held by a ``constructor``
    key, a ``prototype`` key becomes ``_prototype_``. Other keys and all values are kept.
    """
    if isinstance(value, list):
        return [sanitize_proto(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    for key, item in value.items():
        item = sanitize_proto(item)
        if key == "__proto__":
            key = "_proto_"
        elif key == "constructor" and isinstance(item, dict) and "prototype" in item:
            item = {("_prototype_" if k == "prototype" else k): v for k, v in item.items()}
        out[key] = item
    return out


def chunk_bytes(obj: dict[str, Any]) -> bytes:
    """One SSE event ``data: <compact JSON>\\n\\n`` for a chunk, sanitized when needed."""
    data = orjson.dumps(obj)
    if _PROTO in data or (_CONSTRUCTOR in data and _PROTOTYPE in data):
        data = orjson.dumps(sanitize_proto(obj))
    return encode_json(data)


def part_chunk(name: str, value: Any, ai_sdk_major: int | None) -> dict[str, Any] | None:
    """The chunk for CUSTOM ``name`` (see the module docstring), or ``None`` when it has none."""
    if not isinstance(value, dict):
        return None
    if name == "source":
        return _source(value)
    if name.startswith("data-") and len(name) > 5:
        chunk: dict[str, Any] = {"type": name}
        if isinstance(value.get("id"), str):
            chunk["id"] = value["id"]
        chunk["data"] = value.get("data")  # required key: null rather than absent
        if isinstance(value.get("transient"), bool):
            chunk["transient"] = value["transient"]
        return chunk
    if name == "file" or (name == "reasoning-file" and (ai_sdk_major or 0) >= 7):
        if not (isinstance(value.get("url"), str) and isinstance(value.get("mediaType"), str)):
            return None
        chunk = {"type": name, "url": value["url"], "mediaType": value["mediaType"]}
        return _with_provider_metadata(chunk, value)
    if name == "custom" and (ai_sdk_major or 0) >= 7 and isinstance(value.get("kind"), str):
        return _with_provider_metadata({"type": "custom", "kind": value["kind"]}, value)
    return None


def _with_provider_metadata(chunk: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value.get("providerMetadata"), dict):
        chunk["providerMetadata"] = value["providerMetadata"]
    return chunk


def _source(v: dict[str, Any]) -> dict[str, Any] | None:
    """CUSTOM ``source`` (builder convention) → ``source-url`` / ``source-document``."""
    source_id = str(v.get("sourceId") or v.get("url") or "")
    if v.get("sourceType") == "url" and v.get("url"):
        chunk: dict[str, Any] = {"type": "source-url", "sourceId": source_id, "url": v["url"]}
        if v.get("title"):
            chunk["title"] = str(v["title"])
        return chunk
    if v.get("sourceType") == "document":
        chunk = {
            "type": "source-document",
            "sourceId": source_id or str(v.get("title") or "document"),
            "mediaType": str(v.get("mediaType") or "text/plain"),
            "title": str(v.get("title") or source_id or "document"),
        }
        if v.get("filename"):
            chunk["filename"] = str(v["filename"])
        return chunk
    return None


def is_tool_approval(interrupt: Mapping[str, Any]) -> bool:
    """True for an interrupt (its wire dict) that asks to approve a tool call (AG-UI
    ``tool_approval`` with a ``toolCallId``)."""
    return interrupt.get("reason") == "tool_approval" and bool(interrupt.get("toolCallId"))


def interrupt_chunks(
    interrupts: list[Mapping[str, Any]], tool_names: Mapping[str, str], ai_sdk_major: int | None
) -> list[dict[str, Any]]:
    """The chunks for the interrupts of a run (see the module docstring).

    Args:
        interrupts: RUN_FINISHED ``outcome.interrupts``, AG-UI ``Interrupt`` wire dicts
            ({id, reason, message?, toolCallId?, responseSchema?, expiresAt?, metadata?}).
        tool_names: toolCallId → toolName of the tool calls this stream announced (the client
            has a tool part for them).
        ai_sdk_major: the encoder's option; ``>= 6`` allows ``tool-approval-request``.
    """
    out: list[dict[str, Any]] = []
    for interrupt in interrupts:
        iid, reason = interrupt["id"], interrupt["reason"]
        call_id = interrupt.get("toolCallId")
        message = interrupt.get("message")
        meta = interrupt.get("metadata") or {}
        if is_tool_approval(interrupt) and call_id:
            if (ai_sdk_major or 0) >= 6 and call_id in tool_names:
                out.append(_approval_request(interrupt, call_id, meta, ai_sdk_major or 0))
                continue
            data: dict[str, Any] = {"approvalId": iid, "toolCallId": call_id}
            name = tool_names.get(call_id) or meta.get("toolName")
            if isinstance(name, str) and name:
                data["toolName"] = name
            data["reason"] = reason
            if message:
                data["message"] = message
            out.append({"type": APPROVAL_DATA_PART, "id": iid, "data": data})
            continue
        value: dict[str, Any] = {"id": iid, "reason": reason}
        if message:
            value["message"] = message
        if call_id:
            value["toolCallId"] = call_id
        for key in ("responseSchema", "expiresAt"):
            if interrupt.get(key) is not None:
                value[key] = interrupt[key]
        if meta:
            value["metadata"] = meta
        out.append({"type": INTERRUPT_DATA_PART, "id": iid, "data": value})
    return out


def _approval_request(
    interrupt: Mapping[str, Any], call_id: str, meta: Mapping[str, Any], major: int
) -> dict[str, Any]:
    """``tool-approval-request`` (ai v6/v7), with the optional fields each major knows."""
    chunk: dict[str, Any] = {
        "type": "tool-approval-request",
        "approvalId": interrupt["id"],
        "toolCallId": call_id,
    }
    for key in ("approvalDescriptor", "inputSchemaInput"):
        if key in meta:
            chunk[key] = meta[key]
    if isinstance(meta.get("signature"), str):
        chunk["signature"] = meta["signature"]
    if major >= 7:
        if interrupt.get("message"):
            chunk["reason"] = interrupt["message"]
        if meta.get("isAutomatic") is True:
            chunk["isAutomatic"] = True
    return chunk
