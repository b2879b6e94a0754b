"""``openai-responses``: the OpenAI Responses API.

``decoder.py`` with ``_tools.py`` (``response.*`` SSE -> AG-UI events, one run per response of
an agent loop), ``request.py`` (``RunAgentInput`` -> ``POST {base}/responses`` body).
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from .decoder import OpenAIResponsesDecoder
from .request import build_request

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=OpenAIResponsesDecoder.name,
    decoder=OpenAIResponsesDecoder,
    build_request=build_request,
    path="/responses",
    endpoint_suffixes=("/responses",),
    description="OpenAI Responses API",
)
