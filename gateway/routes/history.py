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
"""

from __future__ import annotations

from starlette.responses import Response

from ..store import HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT
from ..tenancy import public_id
from ._endpoint import Call
from ._http import id_param, json_response, positive_int_param

__all__ = ["history"]


async def history(call: Call) -> Response:
    """Answer ``GET /api/v1/agent/history`` (see the module docstring)."""
    request = call.request
    thread_id = id_param(request, "threadId")
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
