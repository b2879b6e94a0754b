"""``openai-chat``: OpenAI Chat Completions and compatible hosts (Groq, Mistral, vLLM, Azure...).

``decoder.py`` (``chat.completion.chunk`` SSE -> AG-UI events), ``request.py`` (``RunAgentInput``
-> ``POST {base}/chat/completions`` body).
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from .decoder import OpenAIChatDecoder
from .request import build_request

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=OpenAIChatDecoder.name,
    decoder=OpenAIChatDecoder,
    build_request=build_request,
    path="/chat/completions",
    endpoint_suffixes=("/chat/completions",),
    description="OpenAI Chat Completions (and compatible hosts)",
)
