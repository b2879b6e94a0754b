"""``langgraph``: a LangGraph Platform (Agent Protocol) run stream.

``decoder.py`` (``runs/stream`` SSE: ``messages``, ``updates``, ``custom`` modes, subgraph
namespaces, interrupts -> AG-UI events), ``request.py`` (``RunAgentInput`` -> the run body:
the new turn as ``input``, or the answer to an interrupt as ``command.resume``).

Route: ``upstream_url`` = the deployment's base URL, ``model`` = the assistant (or graph) id;
the gateway POSTs to ``{upstream_url}/threads/{thread_id}/runs/stream`` with the request's
thread (a UUID, :func:`~.request.thread_uuid`).
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from .decoder import LangGraphDecoder
from .request import build_request, thread_uuid

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=LangGraphDecoder.name,
    decoder=LangGraphDecoder,
    build_request=build_request,
    path="/threads/{thread_id}/runs/stream",
    thread_segment=thread_uuid,
    endpoint_suffixes=("/runs/stream",),
    description="LangGraph Platform run stream (threads/{thread_id}/runs/stream)",
)
