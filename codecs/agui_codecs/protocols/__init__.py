"""One folder per upstream protocol, each a complete home: decoder, request builder, spec.

::

    protocols/
      base.py             StreamDecoder: the shape every decoder shares (framing, error policy)
      spec.py             ProtocolSpec: the decoder, the request builder and the HTTP facts
      _request.py         helpers the request builders share (ClientRequest, merge_params...)
      openai_chat/        openai-chat        decoder.py  request.py
      openai_responses/   openai-responses   decoder.py  _tools.py  request.py
      anthropic/          anthropic          decoder.py  request.py
      gemini/             gemini             decoder.py  request.py
      ai_sdk/             ai-sdk             decoder.py  request.py  chat_request.py
      agui/               agui               decoder.py  _normalizer.py  _holds.py  request.py
      bedrock_converse/   bedrock-converse   decoder.py  _eventstream.py  _sigv4.py  request.py
      a2a/                a2a                decoder.py  request.py
      langgraph/          langgraph          decoder.py  request.py

Each folder's ``__init__.py`` defines ``SPEC`` (a :class:`ProtocolSpec`); the registry
(:mod:`agui_codecs.registry`) lists them with the specs other distributions register under the
entry-point group ``agui_codecs.protocols``. Adding a protocol is one folder plus its
registration (CONTRIBUTING.md).
"""

from __future__ import annotations

from ._request import ClientRequest, ClientWire, check_conversation
from .base import StreamDecoder, upstream_error
from .spec import ProtocolSpec, RequestBody, RequestBuilder, Signer

__all__ = [
    "ClientRequest",
    "ClientWire",
    "ProtocolSpec",
    "RequestBody",
    "RequestBuilder",
    "Signer",
    "StreamDecoder",
    "check_conversation",
    "upstream_error",
]
