"""``GET /api/v1/agent/history``: one page of a thread's history (issue 3 §6).

Query: ``threadId`` (required), ``limit`` (default 50; values above 200 are clamped to 200),
``before_sequence`` (return only items with a smaller sequence: pass the previous page's
``next_before_sequence`` to page backwards).

Answer ``200 {items, total, start_sequence, end_sequence, next_before_sequence, has_more}``
(:meth:`gateway.store.HistoryPage.to_json`): ``items`` oldest first, each with its
``sequence``, ``role``, ordered ``parts`` and ``visibility`` (history vs. context assembly);
``total`` counts every message of the thread. An unknown thread is an empty page. A missing
``threadId`` or a ``limit`` / ``before_sequence`` that is not a positive integer is a 400
``INVALID_PARAMETER``.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from .errors import RequestError
from .routes_runs import DurableRuns, json_response, query_param
from .store import HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, MAX_CURSOR_PART

__all__ = ["history"]


def _positive_int(request: Request, name: str) -> int | None:
    text = query_param(request, name)
    if text is None:
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 16 or int(text) < 1:
        raise RequestError(
            f"query parameter {name!r} must be a positive integer, got {text[:40]!r}",
            code="INVALID_PARAMETER",
        )
    value = int(text)
    if value > MAX_CURSOR_PART:
        raise RequestError(f"query parameter {name!r} is out of range", code="INVALID_PARAMETER")
    return value


async def history(runs: DurableRuns, request: Request) -> Response:
    """Answer ``GET /api/v1/agent/history`` (see the module docstring).

    Raises:
        RequestError: 400 ``INVALID_PARAMETER``; 503 ``RUNS_UNAVAILABLE`` without a store.
    """
    manager = runs.require()
    thread_id = query_param(request, "threadId", required=True)
    assert thread_id is not None
    limit = _positive_int(request, "limit") or HISTORY_DEFAULT_LIMIT
    before = _positive_int(request, "before_sequence")
    page = await manager.history(
        thread_id, limit=min(limit, HISTORY_MAX_LIMIT), before_sequence=before
    )
    return json_response(page.to_json())
