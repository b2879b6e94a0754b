"""agui_codecs: sans-I/O codecs of agui-gateway (no asyncio, HTTP, database or broker imports).

Decoders turn upstream bytes into AG-UI 1.0 events (``ag_ui.core``); encoders turn those events
into client bytes (AG-UI SSE, AI SDK UIMessageChunk SSE). Look codecs up by name with
:func:`get_decoder` / :func:`get_encoder`.
"""

from __future__ import annotations

from .errors import (
    CodecError,
    EventTooLargeError,
    InternalDecoderError,
    LocalProtocolError,
    MalformedUpstreamError,
    RemoteProtocolError,
)
from .registry import DECODERS, ENCODERS, get_decoder, get_encoder

__all__ = [
    "DECODERS",
    "ENCODERS",
    "CodecError",
    "EventTooLargeError",
    "InternalDecoderError",
    "LocalProtocolError",
    "MalformedUpstreamError",
    "RemoteProtocolError",
    "get_decoder",
    "get_encoder",
]
