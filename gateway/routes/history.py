"""``GET /api/v1/agent/history``: one page of a thread's history (issue 3 §6).

Query: ``threadId`` (required), ``limit`` (default 50; values above 200 are clamped to 200),
``before_sequence`` (return only items with a smaller sequence: pass the previous page's
``next_before_sequence`` to page backwards).

Answer ``200 {items, total, start_sequence, end_sequence, next_before_sequence, has_more}``
(:meth:`gateway.store.HistoryPage.to_json`): ``items`` oldest first, each with its
``sequence``, ``role``, ordered ``parts`` and ``visibility`` (history vs. context assembly);
``total`` counts every message of the thread. An unknown thread, or another tenant's (the
caller's tenant scopes its thread ids), is an empty page. A missing
``threadId`` or a ``limit`` / ``before_sequence`` that is not a positive integer is a 400
``INVALID_PARAMETER``, a ``threadId`` that is not an id (:mod:`gateway.ids`) a 422
``INVALID_ID``; without the app lifespan, 503 ``RUNS_UNAVAILABLE``.

``format=ai-sdk`` / ``format=agui`` answer the whole thread instead, as a JSON array that the
clients load as it is (:mod:`gateway.runs.ui_history`): ``UIMessage[]`` for
``useChat({messages})``, AG-UI ``Message[]`` for ``new HttpAgent({initialMessages})``; the
response header ``x-agui-run-id`` names the thread's active run when it has one. Another
``format`` is a 400 ``INVALID_PARAMETER``.
"""

from __future__ import annotations

from starlette.responses import Response

from ..errors import RequestError
from ..store import HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT
from ..tenancy import public_id
from ._endpoint import Call
from ._http import id_param, json_response, positive_int_param, query_param, run_headers

__all__ = ["FORMATS", "history", "thread_runs"]


async def history(call: Call) -> Response:
    """Answer ``GET /api/v1/agent/history`` (see the module docstring)."""
    request = call.request
    thread_id = id_param(request, "threadId")
    format = query_param(request, "format")
    if format is not None:
        return await _client_history(call, thread_id, format)
    limit = positive_int_param(request, "limit") or HISTORY_DEFAULT_LIMIT
    before = positive_int_param(request, "before_sequence")
    page = await call.services.history(
        call.caller, thread_id, limit=min(limit, HISTORY_MAX_LIMIT), before_sequence=before
    )
    body = page.to_json()
    for item in body["items"]:  # the store keys runs by tenant and thread: show the runId
        if isinstance(item.get("runId"), str):
            item["runId"] = public_id(item["runId"])
    return json_response(body)


FORMATS = ("ai-sdk", "agui")
"""Values of ``?format=``."""


async def _client_history(call: Call, thread_id: str, format: str) -> Response:
    if format not in FORMATS:
        raise RequestError(
            f"format must be one of {', '.join(FORMATS)}, got {format[:40]!r}",
            code="INVALID_PARAMETER",
        )
    services = call.services
    messages = await services.client_history(call.caller, thread_id, format=format)
    for message in messages:  # the store keys runs by tenant and thread: show the runId
        metadata = message.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("runId"), str):
            metadata["runId"] = public_id(metadata["runId"])
    active = [
        r
        for r in await services.thread_runs(call.caller, thread_id, limit=100)
        if not r.is_terminal
    ]
    headers = run_headers(thread_id, active[0].public_run_id) if active else None
    return json_response(messages, headers=headers)


async def thread_runs(call: Call) -> Response:
    """``GET /api/v1/agent/runs?threadId=``: ``200 {threadId, runs: [{runId, status, route,
    createdAt, finishedAt, error?}]}``, newest first (at most 100; times ISO 8601 UTC), so a
    reloaded page finds the active run (status ``queued`` or ``running``)."""
    thread_id = id_param(call.request, "threadId")
    runs = await call.services.thread_runs(call.caller, thread_id, limit=100)
    listed = []
    for run in runs:
        entry: dict[str, object] = {
            "runId": run.public_run_id,
            "status": run.status,
            "route": run.route,
            "createdAt": run.created_at.isoformat(),
            "finishedAt": run.finished_at.isoformat() if run.finished_at else None,
        }
        if run.error is not None:
            entry["error"] = run.error
        listed.append(entry)
    return json_response({"threadId": thread_id, "runs": listed})
