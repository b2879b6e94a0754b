"""``echo``: a made-up upstream protocol, "echo lines", registered as a plugin.

One JSON object per line (``framing = "jsonl"``), each with an ``echo`` kind::

    {"echo": "start", "id": "e-1", "model": "echo-1"}
    {"echo": "text", "text": "Hel"}
    {"echo": "text", "text": "lo"}
    {"echo": "done", "reason": "stop"}          (or {"echo": "error", "code", "message"})

Requests are ``POST {base}/echo`` with ``{"model", "say": <the last user text>, **params}``
and the header ``x-echo-version: 1``. ``echo-signed`` is the same protocol with a body
signature (:func:`agui_codecs_echo.request.sign`): the gateway must call the spec's ``sign``
hook with the exact body bytes and send the headers it returns.
"""

from __future__ import annotations

from agui_codecs.protocols import ProtocolSpec

from .decoder import EchoDecoder, SignedEchoDecoder
from .request import build_request, sign

__all__ = ["SIGNED_SPEC", "SPEC"]

SPEC = ProtocolSpec(
    name=EchoDecoder.name,
    decoder=EchoDecoder,
    build_request=build_request,
    path="/echo",
    headers={"x-echo-version": "1"},
    endpoint_suffixes=("/echo",),
    framing="jsonl",
    description="echo lines (a test plugin)",
)

SIGNED_SPEC = ProtocolSpec(
    name=SignedEchoDecoder.name,
    decoder=SignedEchoDecoder,
    build_request=build_request,
    path="/echo",
    headers={"x-echo-version": "1"},
    endpoint_suffixes=("/echo",),
    framing="jsonl",
    sign=sign,
    description="echo lines with a body signature (a test plugin)",
)
