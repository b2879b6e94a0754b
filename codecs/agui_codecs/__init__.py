"""agui_codecs: sans-I/O codecs of agui-gateway (no asyncio, HTTP, database or broker imports).

Decoders turn upstream bytes into AG-UI 1.0 events (``ag_ui.core``); encoders turn those events
into client bytes (AG-UI SSE, AI SDK UIMessageChunk SSE). Each upstream protocol is one folder
of :mod:`agui_codecs.protocols` (decoder, request builder, :class:`ProtocolSpec`); the registry
(:mod:`agui_codecs.registry`: built-ins and entry points) is the one list of them. Look codecs
up by name with :func:`get_protocol`, :func:`get_decoder` and :func:`get_encoder`.
"""

from __future__ import annotations

from .encoders import Encoder
from .errors import (
    CodecError,
    EventTooLargeError,
    InternalDecoderError,
    InvalidInputError,
    LocalProtocolError,
    MalformedUpstreamError,
    RemoteProtocolError,
    RequestTranslationError,
)
from .protocols import ProtocolSpec
from .registry import DECODERS, ENCODERS, get_decoder, get_encoder, get_protocol, protocols

__all__ = [
    "DECODERS",
    "ENCODERS",
    "CodecError",
    "Encoder",
    "EventTooLargeError",
    "InternalDecoderError",
    "InvalidInputError",
    "LocalProtocolError",
    "MalformedUpstreamError",
    "ProtocolSpec",
    "RemoteProtocolError",
    "RequestTranslationError",
    "get_decoder",
    "get_encoder",
    "get_protocol",
    "protocols",
]
