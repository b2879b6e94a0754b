"""``anthropic``: the Anthropic Messages API (version ``2023-06-01``).

``decoder.py`` (``message_start`` ... ``message_stop`` SSE -> AG-UI events), ``request.py``
(``RunAgentInput`` -> ``POST {base}/messages`` body).
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from .decoder import AnthropicDecoder
from .request import build_request

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=AnthropicDecoder.name,
    decoder=AnthropicDecoder,
    build_request=build_request,
    path="/messages",
    headers={"anthropic-version": "2023-06-01"},
    endpoint_suffixes=("/messages",),
    description="Anthropic Messages API",
)
