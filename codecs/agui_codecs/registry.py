"""Codec lookup by name (the ``--from`` / ``--to`` values and route ``protocol`` settings).

Third-party codecs register through the entry-point groups ``agui_gateway.decoders`` and
``agui_gateway.encoders`` (``name = "package.module:Class"``).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from .decoders.agui import AguiDecoder
from .decoders.ai_sdk import AiSdkUpstreamDecoder
from .decoders.anthropic import AnthropicDecoder
from .decoders.base import StreamDecoder
from .decoders.gemini import GeminiDecoder
from .decoders.openai_chat import OpenAIChatDecoder
from .decoders.openai_responses import OpenAIResponsesDecoder
from .encoders.agui import AguiEncoder
from .encoders.ai_sdk import AiSdkEncoder
from .errors import LocalProtocolError

__all__ = ["DECODERS", "ENCODERS", "get_decoder", "get_encoder"]

DECODERS: dict[str, type[StreamDecoder]] = {
    AguiDecoder.name: AguiDecoder,
    OpenAIChatDecoder.name: OpenAIChatDecoder,
    OpenAIResponsesDecoder.name: OpenAIResponsesDecoder,
    AnthropicDecoder.name: AnthropicDecoder,
    GeminiDecoder.name: GeminiDecoder,
    AiSdkUpstreamDecoder.name: AiSdkUpstreamDecoder,
}
ENCODERS: dict[str, type[Any]] = {AguiEncoder.name: AguiEncoder, AiSdkEncoder.name: AiSdkEncoder}


def _plugin(group: str, name: str) -> Any:
    for ep in entry_points(group=group):
        if ep.name == name:
            return ep.load()
    return None


def get_decoder(name: str, **options: Any) -> StreamDecoder:
    """Instantiate the decoder registered as ``name`` with ``options``.

    Raises:
        LocalProtocolError: no decoder has that name.
    """
    cls = DECODERS.get(name) or _plugin("agui_gateway.decoders", name)
    if cls is None:
        known = ", ".join(sorted(DECODERS))
        raise LocalProtocolError(f"unknown decoder {name!r} (known: {known})")
    decoder: StreamDecoder = cls(**options)
    return decoder


def get_encoder(name: str, **options: Any) -> Any:
    """Instantiate the encoder registered as ``name`` (``agui`` or ``ai-sdk``) with ``options``.

    Raises:
        LocalProtocolError: no encoder has that name.
    """
    cls = ENCODERS.get(name) or _plugin("agui_gateway.encoders", name)
    if cls is None:
        known = ", ".join(sorted(ENCODERS))
        raise LocalProtocolError(f"unknown encoder {name!r} (known: {known})")
    return cls(**options)
