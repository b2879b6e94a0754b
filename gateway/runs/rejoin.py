"""Re-joining a run by POSTing its ids again (pure): is the POST a retry, or new input?

``POST /v1/agui/{route}`` whose ``threadId``/``runId`` name a run of that thread that already
exists joins it (``docs/runs.md`` §5, AG-UI re-join) instead of calling the upstream again: a
retried POST never spends twice. What the stock ``@ag-ui/client`` 1.0.0 ``HttpAgent`` posts
then (``src/agent/http.ts`` ``prepareRunAgentInput``: ``messages`` is ``agent.messages``) is
the run's input, possibly followed by what it received of the run before the cut, or, after a
reload, the history it was given as ``initialMessages``.

The rule (:func:`rejoin_refusal`): the POST is a retry when every message of a role the
*client* writes (``user``, ``system``, ``developer``, ``tool``: a client tool result is the
input of a next run) has an id the thread or the run already knows. Assistant, reasoning and
activity messages are what runs produce; one the store does not know yet may be a delta
published before its batch was written (``docs/runs.md`` §2), so it never refuses. A POST with
a message the thread has never seen, or on another route than the run's, is new input under a
taken id: ``409 RUN_ID_TAKEN`` (the client must pick a fresh ``runId``), never a second run
under a renamed id the client does not know.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ..types import JsonObject

__all__ = ["CLIENT_ROLES", "known_ids", "rejoin_refusal"]

CLIENT_ROLES: Final[frozenset[str]] = frozenset({"user", "system", "developer", "tool"})
"""AG-UI message roles whose messages only a client writes (compared on a re-join)."""

_ID_FIELDS: Final[tuple[str, ...]] = ("messageId", "parentMessageId", "toolCallId")


def known_ids(prelude: Iterable[JsonObject]) -> set[str]:
    """The message ids a run's snapshot prelude holds: every message of its
    MESSAGES_SNAPSHOT (the thread's history and the run's completed messages) and every
    message / tool call id its other events name (what is still open, activities)."""
    ids: set[str] = set()
    for event in prelude:
        if event.get("type") == "MESSAGES_SNAPSHOT":
            for message in event.get("messages") or ():
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    ids.add(message["id"])
            continue
        for name in _ID_FIELDS:
            value = event.get(name)
            if isinstance(value, str):
                ids.add(value)
    return ids


def rejoin_refusal(
    posted: Sequence[JsonObject],
    known: set[str],
    *,
    route: str,
    run_route: str | None,
) -> str | None:
    """Why a POST naming a taken run id is *not* a re-join of that run (None: it is).

    Args:
        posted: the POST's ``messages`` (AG-UI wire dicts).
        known: :func:`known_ids` of the run's prelude.
        route: the route the POST addressed; run_route: the route the run was started on.

    Returns:
        A one-line reason for the 409 ``RUN_ID_TAKEN`` message, or None.
    """
    if run_route is not None and route != run_route:
        return f"the run was started on route {run_route!r}"
    for message in posted:
        role = message.get("role")
        message_id = message.get("id")
        if role in CLIENT_ROLES and message_id not in known:
            return f"its {role} message {message_id!r} is not part of that run's conversation"
    return None
