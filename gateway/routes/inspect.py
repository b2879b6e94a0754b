"""The run inspector (issue 16 §6): the page and the JSON it reads::

    GET /inspect                                   the page (HTML; no data in it)
    GET /inspect/static/{name}                     its script and style sheet
    GET /inspect/api/threads?limit=                200 {threads: [{threadId, runs, lastRunAt}]}
    GET /inspect/api/runs?threadId=&limit=         200 {threadId, runs: [run]}
    GET /inspect/api/verdicts?threadId=&runId=     200 {threadId, runId, status, ...verdicts}

The page and its two files hold no data and ask for no credential (a browser cannot send a
header when it navigates); everything they show comes from the ``/inspect/api`` endpoints and
the events endpoint, behind the same door as every endpoint (:mod:`._endpoint`): an API key
the user gives the page once (kept in ``sessionStorage``, sent as ``Authorization: Bearer``),
and for the live stream a scoped token minted with ``POST /api/v1/agent/runs/{thread}/token``
(an ``EventSource`` cannot send headers). With ``GATEWAY_AUTH=off`` no key is asked for.

A ``run`` is ``{threadId, runId, status, route, model, startedAt, finishedAt, error,
usage, cancelRequested}`` (times ISO 8601 UTC; ``error`` ``{code, message}`` of a RUN_ERROR;
``usage`` the terminal event's AG-UI ``TokenUsage[]``). The verdicts are the conformance kit's
over the run's stored events (:mod:`gateway.inspect.verdicts`): ``{profile, events,
lastCursor, rejected, truncated, findings: [{cursor, index, rule, severity, message, ids}],
state?}``, each finding's ``cursor`` the SSE ``id`` of the event it is about (null for a
stream-level one). Ids and limits are checked as everywhere (400 ``INVALID_PARAMETER``, 422
``INVALID_ID``); an unknown or foreign run is 404 ``RUN_NOT_FOUND``; without the app lifespan,
503 ``RUNS_UNAVAILABLE``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Final

from starlette.responses import FileResponse, Response

from ..errors import RequestError
from ..inspect import STATIC_DIR, run_verdicts
from ..store import RunRecord, RunStore
from ..types import RunEvent
from ._access import annotate
from ._cursor import bind_cursor, cursor_tag
from ._endpoint import Call
from ._http import id_param, json_response, positive_int_param

__all__ = [
    "MAX_CHECKED_EVENTS",
    "PAGE_HEADERS",
    "page",
    "run_list",
    "static",
    "thread_list",
    "verdicts",
]

MAX_CHECKED_EVENTS: Final[int] = 50_000
"""Stored events the verdicts endpoint reads at most (``truncated`` beyond)."""

_LIST_DEFAULT, _LIST_MAX = 50, 200
_PAGE = 500

PAGE_HEADERS: Final[dict[str, str]] = {
    # the page's own files only; event content is written as text, never as HTML
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}
"""Headers of the page and its files."""

_STATIC: Final[dict[str, str]] = {
    "inspect.js": "text/javascript; charset=utf-8",
    "inspect.css": "text/css; charset=utf-8",
}


async def page(call: Call) -> Response:
    """``GET /inspect``: the page."""
    return FileResponse(
        STATIC_DIR / "index.html", media_type="text/html; charset=utf-8", headers=PAGE_HEADERS
    )


async def static(call: Call) -> Response:
    """``GET /inspect/static/{name}``: the page's script or style sheet (404 otherwise)."""
    name = call.request.path_params["name"]
    media_type = _STATIC.get(name)
    if media_type is None:
        raise RequestError(f"no inspector file {name[:40]!r}", code="NOT_FOUND", status=404)
    return FileResponse(STATIC_DIR / name, media_type=media_type, headers=PAGE_HEADERS)


def _limit(call: Call) -> int:
    return min(positive_int_param(call.request, "limit") or _LIST_DEFAULT, _LIST_MAX)


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _run_json(run: RunRecord) -> dict[str, object]:
    return {
        "threadId": run.public_thread_id,
        "runId": run.public_run_id,
        "status": run.status,
        "route": run.route,
        "model": run.model,
        "startedAt": _time(run.created_at),
        "finishedAt": _time(run.finished_at),
        "error": run.error,
        "usage": run.usage,
        "cancelRequested": run.cancel_requested,
    }


async def thread_list(call: Call) -> Response:
    """``GET /inspect/api/threads``: the caller's threads, the most recently run first."""
    threads = await call.services.threads(call.caller, limit=_limit(call))
    return json_response(
        {
            "threads": [
                {
                    "threadId": t.public_thread_id,
                    "runs": t.runs,
                    "lastRunAt": _time(t.last_run_at),
                }
                for t in threads
            ]
        }
    )


async def run_list(call: Call) -> Response:
    """``GET /inspect/api/runs?threadId=``: the runs of one of the caller's threads."""
    thread_id = id_param(call.request, "threadId")
    runs = await call.services.thread_runs(call.caller, thread_id, limit=_limit(call))
    return json_response({"threadId": thread_id, "runs": [_run_json(run) for run in runs]})


async def _stored(store: RunStore, run_id: str, limit: int) -> AsyncIterator[RunEvent]:
    after = None
    read = 0
    while read < limit:
        page_ = await store.read_wire(run_id, after=after, limit=min(_PAGE, limit - read))
        for event in page_:
            yield event
        read += len(page_)
        if len(page_) < _PAGE:
            return
        after = page_[-1].cursor


async def verdicts(call: Call) -> Response:
    """``GET /inspect/api/verdicts?threadId=&runId=``: the kit's verdicts on the stored run."""
    thread_id = id_param(call.request, "threadId")
    run_id = id_param(call.request, "runId")
    annotate(call.request, run_id=run_id)
    run = await call.services.run_of(call.caller, thread_id, run_id)
    store = call.services.runs().store
    tag = cursor_tag(run.id)
    events = [event async for event in _stored(store, run.id, MAX_CHECKED_EVENTS + 1)]
    truncated = len(events) > MAX_CHECKED_EVENTS
    checked = events[:MAX_CHECKED_EVENTS]
    ended = run.is_terminal and not truncated
    result = run_verdicts(checked, ended=ended, wire_cursor=lambda e: bind_cursor(e.cursor, tag))
    body = {**_run_json(run), **result.to_json(), "truncated": truncated}
    return json_response(body, headers={"cache-control": "no-store"})
