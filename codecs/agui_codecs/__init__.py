"""agui_codecs: sans-I/O codecs of agui-gateway (no asyncio, HTTP, database or broker imports).

Decoders turn upstream bytes into AG-UI 1.0 events (``ag_ui.core``); encoders turn those events
into client bytes (AG-UI SSE, AI SDK UIMessageChunk SSE). Each upstream protocol is one folder
of :mod:`agui_codecs.protocols` (decoder, request builder, :class:`ProtocolSpec`); the registry
(:mod:`agui_codecs.registry`: built-ins and entry points) is the one list of them. Look codecs
up by name with :func:`get_protocol`, :func:`get_decoder` and :func:`get_encoder`.

The names below are the public API (``tests/codecs/test_exported_members.py`` pins them):

* registry: :data:`DECODERS`, :data:`ENCODERS`, :func:`get_decoder`, :func:`get_encoder`,
  :func:`get_protocol`, :func:`protocols`;
* decoders: :class:`StreamDecoder` (the base every decoder shares), :class:`RunBuilder` (the
  AG-UI run producer decoders call), :class:`ProtocolSpec`, :class:`ClientRequest`;
* encoders: :class:`Encoder` (the contract), :class:`AguiEncoder`, :class:`AiSdkEncoder`;
* events: :func:`event_to_wire`, :func:`wire_view`, :func:`parse_event`;
* SSE: :class:`SSEDecoder`, :class:`SSEEvent`, :func:`encode_data`, :func:`encode_event`;
* the AG-UI semantics core (:mod:`agui_codecs.core`): :class:`RunFold`, :class:`ChunkExpander`,
  and the verifier of the transition tables, :class:`AguiVerifier`;
* errors: :class:`CodecError` and its subclasses (:mod:`agui_codecs.errors`).
"""

from .builder import FINISH_REASONS, RunBuilder
from .core import ChunkExpander, RunFold
from .encoders import AguiEncoder, AiSdkEncoder, Encoder
from .errors import (
    CodecError,
    EventTooLargeError,
    IllegalEventError,
    InternalDecoderError,
    InvalidInputError,
    LocalProtocolError,
    MalformedUpstreamError,
    RemoteProtocolError,
    RequestTranslationError,
)
from .events import event_to_wire, parse_event, wire_view
from .protocols import ClientRequest, ProtocolSpec, StreamDecoder
from .registry import DECODERS, ENCODERS, get_decoder, get_encoder, get_protocol, protocols
from .sse import SSEDecoder, SSEEvent, encode_data, encode_event
from .transitions import AguiVerifier

__all__ = [
    "DECODERS",
    "ENCODERS",
    "FINISH_REASONS",
    "AguiEncoder",
    "AguiVerifier",
    "AiSdkEncoder",
    "ChunkExpander",
    "ClientRequest",
    "CodecError",
    "Encoder",
    "EventTooLargeError",
    "IllegalEventError",
    "InternalDecoderError",
    "InvalidInputError",
    "LocalProtocolError",
    "MalformedUpstreamError",
    "ProtocolSpec",
    "RemoteProtocolError",
    "RequestTranslationError",
    "RunBuilder",
    "RunFold",
    "SSEDecoder",
    "SSEEvent",
    "StreamDecoder",
    "encode_data",
    "encode_event",
    "event_to_wire",
    "get_decoder",
    "get_encoder",
    "get_protocol",
    "parse_event",
    "protocols",
    "wire_view",
]
