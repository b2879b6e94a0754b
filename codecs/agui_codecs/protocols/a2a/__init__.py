"""``a2a``: an Agent2Agent (A2A) agent's ``message/stream`` over JSON-RPC 2.0 and SSE.

``decoder.py`` (v0.3 ``kind`` results and v1.0 ``StreamResponse`` results -> AG-UI events;
tasks, messages, status and artifact updates, interrupts), ``request.py`` (``RunAgentInput`` ->
the ``message/stream`` request: the new user turn, or the answer to an interrupted task).

Route: ``upstream_url`` = the agent's JSON-RPC endpoint (its Agent Card's ``url``), posted to
as it is; no ``model``.
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from .decoder import A2ADecoder
from .request import build_request

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=A2ADecoder.name,
    decoder=A2ADecoder,
    build_request=build_request,
    path="",
    requires_model=False,
    description="A2A agent (message/stream, JSON-RPC over SSE)",
)
