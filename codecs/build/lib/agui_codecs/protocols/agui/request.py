"""Request bodies for an ``agui`` upstream: an AG-UI runtime (e.g. a pydantic-ai, LangGraph or
ADK server).

The body is the ``RunAgentInput`` JSON as ``@ag-ui/client`` 1.0 ``HttpAgent`` posts it. A request
that came in on the AG-UI endpoint is forwarded byte for byte; one from the AI SDK endpoint is
the converted input in wire form (camelCase, optional fields omitted, never ``null``; ``state``,
``tools``, ``context`` and ``forwardedProps`` always present, as ``HttpAgent`` sends them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ag_ui.core import RunAgentInput

from .._request import ClientRequest

__all__ = ["agui_body", "build_request", "run_input_wire"]


def run_input_wire(run_input: RunAgentInput) -> dict[str, Any]:
    """``run_input`` as ``HttpAgent`` posts it: camelCase, ``None`` omitted, the four
    collection keys always present."""
    wire: dict[str, Any] = run_input.model_dump(mode="json", by_alias=True, exclude_none=True)
    wire.setdefault("state", {})
    wire.setdefault("tools", [])
    wire.setdefault("context", [])
    wire.setdefault("forwardedProps", {})
    return wire


def agui_body(request: ClientRequest) -> dict[str, Any] | bytes:
    """The body for an ``agui`` upstream: the client's bytes when it spoke AG-UI, else the
    converted input in wire form."""
    if request.wire == "agui" and request.raw is not None:
        return request.raw
    return run_input_wire(request.run_input)


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any] | bytes:
    """The ``agui`` spec's request builder: :func:`agui_body` (a passthrough protocol: the
    backend picks its model, so ``model`` and ``params`` are not used)."""
    return agui_body(request)
