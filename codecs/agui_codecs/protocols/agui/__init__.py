"""``agui``: an AG-UI runtime (pydantic-ai, LangGraph, ADK... servers).

``decoder.py`` with ``_normalizer.py`` (sequencing, chunks, identity), ``_holds.py`` (state,
holds, the verifier guard) and ``_cleaning.py`` (AG-UI events passed through and
repaired where the clients would reject them), ``request.py`` (the ``RunAgentInput`` as
``HttpAgent`` posts it).
A passthrough protocol: the route URL is the endpoint itself and the runtime picks its model.
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from .decoder import AguiDecoder
from .request import build_request

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=AguiDecoder.name,
    decoder=AguiDecoder,
    build_request=build_request,
    passthrough=True,
    requires_model=False,
    description="AG-UI runtime (passthrough)",
)
