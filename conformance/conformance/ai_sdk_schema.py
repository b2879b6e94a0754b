"""``uiMessageChunkSchema`` of the AI SDK, per major, in the form :mod:`conformance.schema` reads.

Transcribed from ``src/ui-message-stream/ui-message-chunks.ts`` of ``ai`` 5.0.277 (sources in
``dist/index.mjs.map``), 6.0.326 and 7.0.173, with ``src/types/provider-metadata.ts``,
``json-value.ts`` and (v7) ``citation.ts``. Every chunk object is a ``z.looseObject``: extra
keys are kept and never an error, so nothing is stripped. ``z.unknown()`` fields (``input``,
``output``, ``data``, ``messageMetadata`` of ``message-metadata``) must be present; ``null``
is a value. The union is not discriminated, but every member has a literal ``type`` except
``data-*``, so looking the member up by ``type`` gives the same verdict.

:func:`chunk_schema` returns the schema for one ``type`` in one major, or ``None`` when that
major has no such chunk (its union then fails: the stream is rejected).
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from agui_codecs.transitions import UI_MAJORS

__all__ = ["chunk_schema", "known_in"]

Schema = dict[str, Any]

_STR: Final[Schema] = {"type": "string"}
_BOOL: Final[Schema] = {"type": "boolean"}
_ANY: Final[Schema] = {}
_PROVIDER_METADATA: Final[Schema] = {
    "type": "object",
    "additionalProperties": {"type": "object", "additionalProperties": _ANY},
}
_TOOL_METADATA: Final[Schema] = {"type": "object", "additionalProperties": _ANY}
_NONNEG_INT: Final[Schema] = {"type": "integer", "minimum": 0}


def _obj(required: dict[str, Schema], optional: dict[str, Schema] | None = None) -> Schema:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
    }


def _citation() -> Schema:
    url = _obj(
        {"type": {"const": "source"}, "sourceType": {"const": "url"}, "id": _STR, "url": _STR},
        {"title": _STR, "providerMetadata": _PROVIDER_METADATA},
    )
    document = _obj(
        {
            "type": {"const": "source"},
            "sourceType": {"const": "document"},
            "id": _STR,
            "mediaType": _STR,
            "title": _STR,
        },
        {"filename": _STR, "providerMetadata": _PROVIDER_METADATA},
    )
    return _obj(
        {"source": {"oneOf": [url, document]}},
        {"startIndex": _NONNEG_INT, "endIndex": _NONNEG_INT, "citedText": _STR},
    )


def _fields(major: int) -> dict[str, tuple[dict[str, Schema], dict[str, Schema]]]:
    """type -> (required fields, optional fields) for one major (``type`` itself aside)."""
    pm = {"providerMetadata": _PROVIDER_METADATA}
    v6 = major >= 6
    tool_meta = {"toolMetadata": _TOOL_METADATA} if v6 else {}
    title = {"title": _STR} if v6 else {}
    tool_common = {"providerExecuted": _BOOL, **pm, **tool_meta, "dynamic": _BOOL, **title}
    out: dict[str, tuple[dict[str, Schema], dict[str, Schema]]] = {
        "text-start": ({"id": _STR}, pm),
        "text-delta": ({"id": _STR, "delta": _STR}, pm),
        "text-end": (
            {"id": _STR},
            {"citations": {"type": "array", "items": _citation()}, **pm} if major >= 7 else pm,
        ),
        "error": ({"errorText": _STR}, {}),
        "tool-input-start": (
            {"toolCallId": _STR, "toolName": _STR},
            {
                **({"inputEncoding": {"enum": ["json", "text"]}} if v6 else {}),
                "providerExecuted": _BOOL,
                **(pm if v6 else {}),
                **tool_meta,
                "dynamic": _BOOL,
                **title,
            },
        ),
        "tool-input-delta": ({"toolCallId": _STR, "inputTextDelta": _STR}, {}),
        "tool-input-available": (
            {"toolCallId": _STR, "toolName": _STR, "input": _ANY},
            tool_common,
        ),
        "tool-input-error": (
            {"toolCallId": _STR, "toolName": _STR, "input": _ANY, "errorText": _STR},
            tool_common,
        ),
        "tool-output-available": (
            {"toolCallId": _STR, "output": _ANY},
            {
                "providerExecuted": _BOOL,
                **(pm if v6 else {}),
                **tool_meta,
                "dynamic": _BOOL,
                "preliminary": _BOOL,
            },
        ),
        "tool-output-error": (
            {"toolCallId": _STR, "errorText": _STR},
            {"providerExecuted": _BOOL, **(pm if v6 else {}), **tool_meta, "dynamic": _BOOL},
        ),
        "reasoning-start": ({"id": _STR}, pm),
        "reasoning-delta": ({"id": _STR, "delta": _STR}, pm),
        "reasoning-end": ({"id": _STR}, pm),
        "source-url": ({"sourceId": _STR, "url": _STR}, {"title": _STR, **pm}),
        "source-document": (
            {"sourceId": _STR, "mediaType": _STR, "title": _STR},
            {"filename": _STR, **pm},
        ),
        "file": ({"url": _STR, "mediaType": _STR}, pm),
        "start-step": ({}, {}),
        "finish-step": ({}, {}),
        "start": ({}, {"messageId": _STR, "messageMetadata": _ANY}),
        "finish": (
            {},
            {
                "finishReason": {"enum": sorted(UI_MAJORS[major].finish_reasons)},
                "messageMetadata": _ANY,
            },
        ),
        "abort": ({}, {"reason": _STR} if v6 else {}),
        "message-metadata": ({"messageMetadata": _ANY}, {}),
    }
    if v6:
        approval = {"approvalDescriptor": _ANY, "inputSchemaInput": _ANY, "signature": _STR}
        if major >= 7:
            approval |= {"reason": _STR, "isAutomatic": _BOOL}
        out["tool-approval-request"] = ({"approvalId": _STR, "toolCallId": _STR}, approval)
        out["tool-output-denied"] = ({"toolCallId": _STR}, {})
    if major >= 7:
        out["tool-approval-response"] = (
            {"approvalId": _STR, "approved": _BOOL},
            {"reason": _STR, "providerExecuted": _BOOL, **pm},
        )
        out["custom"] = ({"kind": _STR}, pm)
        out["reasoning-file"] = ({"url": _STR, "mediaType": _STR}, pm)
        out["reset-step"] = ({}, {})
        part_text = _obj({"type": {"const": "text"}, "text": _STR}, pm)
        part_file = _obj(
            {"type": {"const": "file"}, "mediaType": _STR, "url": _STR},
            {
                "filename": _STR,
                "providerReference": {"type": "object", "additionalProperties": _STR},
                **pm,
            },
        )
        out["steering-message"] = (
            {"id": _STR, "parts": {"type": "array", "items": {"oneOf": [part_text, part_file]}}},
            {},
        )
    return out


@cache
def _table(major: int) -> dict[str, Schema]:
    return {
        ctype: _obj({"type": {"const": ctype}, **req}, opt)
        for ctype, (req, opt) in _fields(major).items()
    }


_DATA: Final[Schema] = _obj({"type": _STR, "data": _ANY}, {"id": _STR, "transient": _BOOL})


def chunk_schema(major: int, chunk_type: str) -> Schema | None:
    """The schema of ``chunk_type`` in AI SDK ``major`` (5, 6 or 7), or None if it has none.

    Raises:
        KeyError: ``major`` is not 5, 6 or 7.
    """
    UI_MAJORS[major]
    if chunk_type.startswith("data-"):
        return _DATA
    return _table(major).get(chunk_type)


def known_in(chunk_type: str) -> list[int]:
    """The majors whose schema has ``chunk_type`` (for a helpful message on an unknown type)."""
    return [m for m in sorted(UI_MAJORS) if chunk_schema(m, chunk_type) is not None]
