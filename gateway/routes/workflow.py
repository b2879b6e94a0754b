"""The ``WorkflowChatTransport`` endpoints (npm ``@workflow/ai`` 5.0.0, with ``ai`` 6)::

    POST /v1/workflow/{route}/{chat_id}                         AI SDK chat request ->
                                                                UIMessageChunk SSE; header
                                                                x-workflow-run-id: the runId
    GET  /v1/workflow/{route}/{chat_id}/{run_id}/stream?startIndex=N
                                                                the run's chunks from N on

The transport (``dist/workflow-chat-transport.js``) POSTs ``{messages, ...body}`` to its
``api`` (no chat ``id``: here the chat id is the last path segment of ``api``, so
``api: "/v1/workflow/gpt/t1"``; a body ``id`` must name the same chat), requires the
``x-workflow-run-id`` response header, counts the chunks it parses and, when the stream ends
without a ``finish`` chunk (a cut), GETs ``{api}/{encodeURIComponent(runId)}/stream?startIndex=
<chunks received>`` until it has the ``finish``. ``reconnectToStream`` (``useChat``
``resume``) sends its ``startIndex`` (default the ``initialStartIndex`` option, 0), and a
negative one reads the tail: the answer then carries ``x-workflow-stream-tail-index`` (the
index of the last chunk stored when the request came), from which the transport computes
where it stands for its retries.

Chunk N is defined by the run's stored events (:mod:`gateway.chunk_offsets`): the resume
encodes the run from its first event with the encoder of the POST (the run's messageId, its
``{threadId, runId}`` metadata, the route's ``ai_sdk_major``) and sends chunk N on, then the
live tail. The ``{run_id}`` segment names a run of the chat started on this route; the chat id
in its place (``reconnectToStream`` before any run id is known) names the chat's active run
there, ``204`` when it has none.

Errors: 400 ``INVALID_PARAMETER`` (``startIndex`` not an integer, a body ``id`` of another
chat), 404 ``RUN_NOT_FOUND``, 422 ``INVALID_ID``, 503 ``RUNS_UNAVAILABLE`` (no store: a run
that cannot be resumed by index is not started here); the rest as ``POST /v1/ai-sdk/{route}``.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote, unquote

from starlette.responses import Response

from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest

from .. import metrics
from ..chunk_offsets import encode_event_frames, frames_from, read_prefix, resolve_start
from ..errors import RequestError
from ..ids import check_id
from ..runs.continued import continued_calls
from ..store import RunNotFoundError, RunRecord
from ..types import Cursor
from ._access import annotate
from ._endpoint import Call
from ._http import path_id, query_param, read_json, run_headers, sse_response
from .stream import ai_sdk_chat, resume_encoder

__all__ = [
    "RUN_ID_HEADER",
    "TAIL_INDEX_HEADER",
    "WORKFLOW_HEADERS",
    "workflow_chat",
    "workflow_stream",
]

RUN_ID_HEADER: Final = "x-workflow-run-id"
"""The POST answer's header naming the run (the percent-encoded AG-UI runId)."""

TAIL_INDEX_HEADER: Final = "x-workflow-stream-tail-index"
"""The resume answer's header for a negative ``startIndex``: the last stored chunk's index."""

WORKFLOW_HEADERS: Final[tuple[str, str]] = (RUN_ID_HEADER, TAIL_INDEX_HEADER)
"""Response headers CORS exposes to pages (:func:`gateway.app.create_app`)."""

_MAX_DIGITS = 16


def _start_index(text: str | None) -> int:
    """``?startIndex=``: an integer (0 when absent), negative counting from the end."""
    if text is None:
        return 0
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > _MAX_DIGITS:
        raise RequestError(
            f"query parameter 'startIndex' must be an integer, got {text[:40]!r}",
            code="INVALID_PARAMETER",
        )
    return int(text)


async def workflow_chat(call: Call) -> Response:
    """``POST /v1/workflow/{route}/{chat_id}``: the chat request as ``POST /v1/ai-sdk/{route}``
    with the chat id of the path, answered with ``x-workflow-run-id``."""
    services = call.services
    route = services.route(call.request.path_params["route"], call.caller)
    annotate(call.request, route=route.name)
    services.runs()  # 503 without a store
    chat_id = path_id(call.request, "chat_id")
    limit = services.settings.max_request_bytes
    body_timeout = services.settings.body_timeout_seconds
    chat, raw = await read_json(call.request, AiSdkChatRequest, limit=limit, timeout=body_timeout)
    if chat.id is None:
        chat = chat.model_copy(update={"id": chat_id})
    elif chat.id != chat_id:
        raise RequestError(
            f"the body's id {chat.id[:40]!r} names another chat than the URL's",
            code="INVALID_PARAMETER",
        )

    def run_id_header(run: RunRecord) -> dict[str, str]:
        return {RUN_ID_HEADER: quote(run.public_run_id, safe="")}

    return await ai_sdk_chat(call, route, chat, raw, extra_headers=run_id_header)


async def workflow_stream(call: Call) -> Response:
    """``GET /v1/workflow/{route}/{chat_id}/{run_id}/stream?startIndex=N``: the run's chunks
    from index N on (see the module), then live until ``[DONE]``."""
    services = call.services
    route = services.route(call.request.path_params["route"], call.caller)
    annotate(call.request, route=route.name)
    manager = services.runs()
    chat_id = path_id(call.request, "chat_id")
    # the transport encodes the header's (already percent-encoded) value once more
    segment = check_id(unquote(call.request.path_params["run_id"]), loc=("path", "run_id"))
    start_index = _start_index(query_param(call.request, "startIndex"))
    run: RunRecord | None
    try:
        run = await services.run_of(call.caller, chat_id, segment)
    except RunNotFoundError:
        if segment != chat_id:
            raise
        run = await services.active_run(call.caller, route, chat_id)
        if run is None:
            return Response(status_code=204)
    if run.route is not None and run.route != route.name:
        raise RunNotFoundError(f"route {route.name!r} has no run {segment!r} of this chat")
    annotate(call.request, run_id=run.public_run_id)
    reader = await manager.reader(run.id, run=run)
    metrics.RESUMES.labels("start_index").inc()
    upstream_ids = route.protocol == "ai-sdk"  # its fresh runs keep the backend's messageId
    continues = await continued_calls(manager.store, run, upstream_ids=upstream_ids)
    encoder = resume_encoder(route, run, continues=continues)
    headers = run_headers(run.public_thread_id, run.public_run_id)
    headers[RUN_ID_HEADER] = quote(run.public_run_id, safe="")
    frames = encode_event_frames(reader, encoder)
    if start_index >= 0:
        body = frames_from(frames, start_index)
        return sse_response(body, encoder, services.settings, headers=headers)
    through = Cursor(run.last_epoch, run.last_seq) if run.last_seq > 0 else None
    prefix = await read_prefix(frames, through=through, to_end=run.is_terminal)
    headers[TAIL_INDEX_HEADER] = str(prefix.chunks - 1)
    body = frames_from(frames, resolve_start(start_index, prefix.chunks), prefix=prefix)
    return sse_response(body, encoder, services.settings, headers=headers)
