"""``ai-sdk``: an existing AI SDK backend (a route returning ``toUIMessageStreamResponse()``).

``decoder.py`` (UIMessageChunk SSE -> AG-UI events), ``request.py`` (the chat request the
backend reads: the client's bytes, or ``RunAgentInput`` -> ``{id, messages: UIMessage[],
trigger}``), ``chat_request.py`` (the other direction, for the gateway's own AI SDK endpoint:
the chat request ``useChat`` posts -> ``RunAgentInput``). A passthrough protocol: the route URL
is the endpoint itself and the backend picks its model.
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from .decoder import AiSdkUpstreamDecoder
from .request import build_request

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=AiSdkUpstreamDecoder.name,
    decoder=AiSdkUpstreamDecoder,
    build_request=build_request,
    passthrough=True,
    requires_model=False,
    description="AI SDK UI message stream backend (passthrough)",
)
