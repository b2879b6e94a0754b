"""The durable-run endpoints (issue 3; invariants in ``docs/runs.md``)::

    POST /api/v1/agent/runs                             {route, input} -> 201 {threadId, runId}
    GET  /api/v1/agent/runs/{thread_id}/events?runId=   AG-UI SSE, resumable (Last-Event-ID)
    POST /api/v1/agent/runs/{thread_id}/cancel?runId=   200 {threadId, runId, status,
                                                        cancelRequested}
    POST /api/v1/agent/runs/{thread_id}/token?runId=    200 {token, expiresAt, eventsUrl}: a
                                                        scoped token for an EventSource
    GET  /v1/ai-sdk/{route}/{chat_id}/stream            AI SDK resume: 204, or the chat's
                                                        active run on that route from its
                                                        first chunk
    DELETE /v1/ai-sdk/{route}/{chat_id}/stream          cancel the chat's active run there:
                                                        200 as cancel, or 204 (none)

``POST /api/v1/agent/runs`` starts the run in the background and answers at once (``location``
names its events URL); a taken ``runId`` is ``409 RUN_EXISTS`` (a retried create never starts
a second run). The events endpoint frames ``event: <TYPE>`` / ``id: <cursor>`` /
``data: <json>`` (ids ``<epoch>.<seq>.<tag>``, bound to the run: :mod:`._cursor`) and closes
after the run's terminal event; with ``Last-Event-ID`` (or ``?lastEventId=``) it resumes
strictly after that event, and answers ``204`` when the run has ended and nothing is left
after it (a browser ``EventSource`` then stops reconnecting); ``?unnamed=1`` leaves the
``event:`` lines out, so an ``EventSource``'s ``onmessage`` receives every event (the type is
in the JSON); without a cursor, ``?replay=full``
(default) starts at RUN_STARTED and ``?replay=snapshot`` sends the snapshot prelude and then
the events after it. Cancel is idempotent.

Thread and run ids are the caller's (its tenant scopes them, :mod:`gateway.tenancy`): a run of
another thread or another tenant is a 404 exactly like a missing one, and a run id taken on
another thread is free on this one. The events endpoint also takes a scoped token
(``?access_token=``, what a browser ``EventSource`` can send), minted by the token endpoint.

Errors before a stream starts are JSON ``{"error": {"code", "message"}}``: 400
``INVALID_PARAMETER`` / ``INVALID_CURSOR``, 401 / 403 (the door, allowlists), 404
``RUN_NOT_FOUND``, 409 ``RUN_EXISTS``, 422 ``INVALID_ID``, 429 (quotas), 503
``RUNS_UNAVAILABLE`` (the app runs without its lifespan, so no store is open).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final
from urllib.parse import quote

from ag_ui.core import RunAgentInput
from pydantic import BaseModel, ConfigDict
from starlette.responses import Response

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.protocols import ClientRequest

from .. import metrics
from ..auth import ForbiddenError
from ..body_parse import off_loop
from ..encoding import encode_run_events
from ..errors import RequestError
from ..ids import check_ids, run_input_ids
from ..runs.continued import continued_calls
from ..store import RunEvent, RunRecord
from ._access import annotate
from ._cursor import cursor_tag, unbind_cursor
from ._endpoint import Call
from ._http import (
    flag_param,
    json_response,
    last_event_id,
    path_id,
    query_param,
    read_json,
    run_headers,
    run_ref,
    sse_response,
)
from .stream import resume_encoder

__all__ = [
    "REPLAY_MODES",
    "RunRequest",
    "ai_sdk_cancel",
    "ai_sdk_resume",
    "cancel_run",
    "create_run",
    "events",
    "events_token",
]

REPLAY_MODES: Final[tuple[str, ...]] = ("full", "snapshot")
"""Values of ``?replay=`` on the events endpoint."""


class RunRequest(BaseModel):
    """Body of ``POST /api/v1/agent/runs``.

    Attributes:
        route: name of the route to run on (as in ``/v1/agui/{route}``).
        input: the AG-UI 1.0 ``RunAgentInput`` (camelCase keys).
    """

    model_config = ConfigDict(extra="forbid")

    route: str
    input: RunAgentInput


def _check_input(run_input: RunAgentInput) -> None:
    check_ids(run_input_ids(run_input, prefix=("input",)))


async def create_run(call: Call) -> Response:
    """``POST /api/v1/agent/runs``: start the run, answer ``201 {threadId, runId}``.

    Raises:
        RequestError: 503 without a store; 404 unknown route; 422 when the input has no
            upstream equivalent.
        RunExistsError: 409, ``runId`` is taken.
    """
    services = call.services
    services.runs()
    limit = services.settings.max_request_bytes
    body_timeout = services.settings.body_timeout_seconds
    body, _raw = await read_json(call.request, RunRequest, limit=limit, timeout=body_timeout)
    await off_loop(len(body.input.messages), _check_input, body.input)
    route = services.route(body.route, call.caller)
    annotate(call.request, route=route.name)
    run = await services.start_run(
        route,
        ClientRequest(body.input, wire="agui"),
        caller=call.caller,
        accept_language=call.request.headers.get("accept-language"),
    )
    annotate(call.request, run_id=run.public_run_id)
    thread_id, run_id = run.public_thread_id, run.public_run_id
    return json_response(
        {"threadId": thread_id, "runId": run_id},
        201,
        headers={"location": _events_url(thread_id, run_id)},
    )


async def _aclose(iterator: AsyncIterator[RunEvent]) -> None:
    closer = getattr(iterator, "aclose", None)
    if closer is not None:
        await closer()


def _events_url(thread_id: str, run_id: str) -> str:
    # percent-encoded: a header holds latin-1 only, and an id may hold any other character
    return f"/api/v1/agent/runs/{quote(thread_id, safe='')}/events?runId={quote(run_id, safe='')}"


async def _run_of(call: Call) -> RunRecord:
    """The caller's run named by ``{thread_id}`` and ``?runId=`` (404 when it has none)."""
    thread_id, run_id = run_ref(call.request)
    annotate(call.request, run_id=run_id)
    return await call.services.run_of(call.caller, thread_id, run_id)


async def cancel_run(call: Call) -> Response:
    """``POST /api/v1/agent/runs/{thread_id}/cancel?runId=``: cancel (idempotent).

    The answer is the run as it was when flagged: ``status`` (still ``running`` while the pump
    closes it, or the terminal status when it had already ended) and ``cancelRequested``
    (False when there was nothing left to cancel).
    """
    run = await _run_of(call)
    record = await call.services.runs().cancel(run.id)
    return _cancelled(record)


def _cancelled(record: RunRecord) -> Response:
    """``200 {threadId, runId, status, cancelRequested}`` for a run as flagged for cancel."""
    return json_response(
        {
            "threadId": record.public_thread_id,
            "runId": record.public_run_id,
            "status": record.status,
            "cancelRequested": not record.is_terminal,
        }
    )


async def events(call: Call) -> Response:
    """``GET /api/v1/agent/runs/{thread_id}/events``: the run's AG-UI SSE (see the module)."""
    run = await _run_of(call)
    manager = call.services.runs()
    cursor = last_event_id(call.request)
    replay = query_param(call.request, "replay") or "full"
    if replay not in REPLAY_MODES:
        raise RequestError(
            f"replay must be one of {', '.join(REPLAY_MODES)}, got {replay!r}",
            code="INVALID_PARAMETER",
        )
    settings = call.services.settings
    encoder = AguiEncoder(event_lines=not flag_param(call.request, "unnamed"))
    tag = cursor_tag(run.id)
    if cursor is not None or replay == "full":
        after = unbind_cursor(cursor, run.id) if cursor is not None else None
        reader = await manager.reader(run.id, after=after)  # validates the cursor (400)
        if after is not None and await manager.ended_at(run.id, after):
            # nothing left: 204 makes a browser EventSource stop reconnecting (WHATWG HTML,
            # "Processing model": a status other than 200 fails the connection for good)
            await _aclose(reader)
            return Response(status_code=204)
        if cursor is not None:
            metrics.RESUMES.labels("last_event_id").inc()
        body = encode_run_events(reader, encoder, cursor_tag=tag)
        return sse_response(body, encoder, settings)
    prelude = await manager.snapshot_prelude(run.id)
    tail = None if prelude.ended else await manager.reader(run.id, after=prelude.cursor)
    metrics.RESUMES.labels("snapshot").inc()
    body = encode_run_events(
        tail,
        encoder,
        prelude=prelude.events,
        prelude_cursor=prelude.cursor,
        cursor_tag=tag,
    )
    return sse_response(body, encoder, settings)


async def events_token(call: Call) -> Response:
    """``POST /api/v1/agent/runs/{thread_id}/token?runId=``: a scoped token reading this run's
    events (``?access_token=`` on the events URL, for a browser ``EventSource``), answered
    ``200 {token, expiresAt, eventsUrl}`` (``expiresAt``: unix seconds)."""
    if call.caller.method == "token":
        raise ForbiddenError("a scoped token cannot mint tokens")
    run = await _run_of(call)
    thread_id, run_id = run.public_thread_id, run.public_run_id
    token, expires = call.services.auth.mint(call.caller, thread_id, run_id)
    url = f"{_events_url(thread_id, run_id)}&access_token={quote(token, safe='')}"
    return json_response(
        {"token": token, "expiresAt": expires, "eventsUrl": url},
        headers={"cache-control": "no-store"},
    )


async def ai_sdk_resume(call: Call) -> Response:
    """``GET /v1/ai-sdk/{route}/{chat_id}/stream``: 204, or the chat's active run from its start
    and then live (``ai`` ``DefaultChatTransport.reconnectToStream``).

    ``chat_id`` is the thread id (the AI SDK POST records its runs under the chat ``id``). The
    ``start`` chunk carries the run's recorded messageId, else (an AI SDK backend that chose
    its own) RUN_STARTED ``metadata.messageId`` as recorded: the live stream's id. The route
    addressed gives the clients' ``ai_sdk_major``; only a run started on that route is resumed
    there (204 otherwise).
    """
    services = call.services
    route = services.route(call.request.path_params["route"], call.caller)
    annotate(call.request, route=route.name)
    manager = services.runs()
    run = await services.active_run(call.caller, route, path_id(call.request, "chat_id"))
    if run is None:
        return Response(status_code=204)
    annotate(call.request, run_id=run.public_run_id)
    reader = await manager.reader(run.id)
    metrics.RESUMES.labels("ai_sdk").inc()
    upstream_ids = route.protocol == "ai-sdk"  # its fresh runs keep the backend's messageId
    continues = await continued_calls(manager.store, run, upstream_ids=upstream_ids)
    encoder = resume_encoder(route, run, continues=continues)
    headers = run_headers(run.public_thread_id, run.public_run_id)
    body = encode_run_events(reader, encoder)
    return sse_response(body, encoder, services.settings, headers=headers)


async def ai_sdk_cancel(call: Call) -> Response:
    """``DELETE /v1/ai-sdk/{route}/{chat_id}/stream``: cancel the chat's active run on that
    route (what a ``useChat`` Stop button calls besides ``stop()``, which only aborts the
    fetch): ``200 {threadId, runId, status, cancelRequested}`` as the cancel endpoint, or
    ``204`` when the chat has no active run there (nothing to stop; idempotent)."""
    services = call.services
    route = services.route(call.request.path_params["route"], call.caller)
    annotate(call.request, route=route.name)
    run = await services.active_run(call.caller, route, path_id(call.request, "chat_id"))
    if run is None:
        return Response(status_code=204)
    annotate(call.request, run_id=run.public_run_id)
    record = await services.runs().cancel(run.id)
    return _cancelled(record)
