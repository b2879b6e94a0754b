"""``gemini``: Gemini ``streamGenerateContent`` (Gemini API and Vertex AI).

``decoder.py`` (``GenerateContentResponse`` SSE or JSON array -> AG-UI events), ``request.py``
(``RunAgentInput`` -> ``POST {base}/models/{model}:streamGenerateContent?alt=sse`` body; the
key goes in ``x-goog-api-key`` through the route's ``auth``).
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from .decoder import GeminiDecoder
from .request import build_request, gemini_model_path

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=GeminiDecoder.name,
    decoder=GeminiDecoder,
    build_request=build_request,
    path="/models/{model}:streamGenerateContent?alt=sse",
    model_segment=gemini_model_path,
    endpoint_suffixes=(":streamGenerateContent", ":generateContent"),
    description="Gemini streamGenerateContent (Gemini API, Vertex AI)",
)
