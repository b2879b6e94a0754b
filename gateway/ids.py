"""Ids checked at the edge: every client id that reaches the run store is refused before any
work when it is empty, too long or holds characters a database column cannot keep the same way
on every backend.

An id (``threadId``, ``runId``, a message or tool-call id, the AI SDK chat ``id``, a
``{thread_id}`` / ``{chat_id}`` path segment, ``?runId=`` / ``?threadId=``) is accepted when it
is 1 to :data:`MAX_ID_LENGTH` characters long and holds no character of the Unicode categories
in :data:`REFUSED_CATEGORIES`: control characters (``Cc``: NUL, which PostgreSQL text columns
cannot store at all, C0, DEL and C1), lone surrogates (``Cs``: JSON ``"\\ud800"`` decodes to
one; no UTF-8 encoder writes it) and the line and paragraph separators (``Zl``, ``Zp``: a log
line would break at them). Everything else is kept as sent, so the check is the same on
SQLite and PostgreSQL. Message *content* is not an id: it may hold any character (it is
stored inside JSON, where a NUL is the escape ``\\u0000``).

The refusal is :class:`InvalidIdError`: ``422 INVALID_ID`` with ``detail`` = one entry per bad
id, ``{"loc": [...], "msg": ...}`` (the value itself is not echoed).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any, Final

from ag_ui.core import AssistantMessage, RunAgentInput, ToolMessage

from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest, ToolUIPart

from .errors import RequestError

__all__ = [
    "MAX_ID_LENGTH",
    "REFUSED_CATEGORIES",
    "InvalidIdError",
    "chat_request_ids",
    "check_id",
    "check_ids",
    "id_problem",
    "run_input_ids",
]

MAX_ID_LENGTH: Final[int] = 100
"""Longest accepted id, in characters (a UUID is 36). The store keys a run by its tenant,
thread and run id together (:mod:`gateway.tenancy`): with this bound every key fits its
255-character column on every backend."""

REFUSED_CATEGORIES: Final[frozenset[str]] = frozenset({"Cc", "Cs", "Zl", "Zp"})
"""Unicode general categories an id may not hold (see the module docstring)."""

Loc = tuple[str | int, ...]


class InvalidIdError(RequestError):
    """422 ``INVALID_ID``: an id is empty, too long or holds a refused character.

    ``detail`` lists every bad id as ``{"loc": [...], "msg": ...}``.
    """

    status = 422
    code = "INVALID_ID"


def id_problem(value: object) -> str | None:
    """Why ``value`` is not an acceptable id, or None when it is."""
    if not isinstance(value, str):
        return "must be a string"
    if not value:
        return "must not be empty"
    if len(value) > MAX_ID_LENGTH:
        return f"must be at most {MAX_ID_LENGTH} characters (got {len(value)})"
    for char in value:
        if unicodedata.category(char) in REFUSED_CATEGORIES:
            return f"must not contain control characters (U+{ord(char):04X})"
    return None


def _fail(problems: list[tuple[Loc, str]]) -> InvalidIdError:
    first_loc, first_msg = problems[0]
    where = ".".join(str(p) for p in first_loc)
    return InvalidIdError(
        f"invalid id {where}: {first_msg}",
        detail=[{"loc": list(loc), "msg": msg} for loc, msg in problems],
    )


def check_id(value: str, *, loc: Loc) -> str:
    """Return ``value`` when it is an acceptable id.

    Args:
        value: the id as received.
        loc: where it came from, e.g. ``("query", "runId")`` (named in the error).

    Raises:
        InvalidIdError: 422 ``INVALID_ID``.
    """
    problem = id_problem(value)
    if problem is not None:
        raise _fail([(loc, problem)])
    return value


def check_ids(ids: Iterable[tuple[Loc, Any]]) -> None:
    """Check every ``(loc, value)`` pair; one error lists all the bad ones.

    Raises:
        InvalidIdError: 422 ``INVALID_ID``.
    """
    problems = [(loc, p) for loc, value in ids if (p := id_problem(value)) is not None]
    if problems:
        raise _fail(problems)


def run_input_ids(run_input: RunAgentInput, *, prefix: Loc = ()) -> Iterator[tuple[Loc, Any]]:
    """The ids of a ``RunAgentInput`` that the store keeps (camelCase locations): ``threadId``,
    ``runId``, ``parentRunId``, each message ``id``, an assistant message's tool-call ids, a
    tool message's ``toolCallId`` and each ``resume[]`` entry's ``interruptId`` (claimed in the
    store, ``docs/runs.md`` §7)."""
    yield (*prefix, "threadId"), run_input.thread_id
    yield (*prefix, "runId"), run_input.run_id
    if run_input.parent_run_id is not None:
        yield (*prefix, "parentRunId"), run_input.parent_run_id
    for index, message in enumerate(run_input.messages):
        yield (*prefix, "messages", index, "id"), message.id
        if isinstance(message, AssistantMessage):
            for call_index, call in enumerate(message.tool_calls or ()):
                yield (*prefix, "messages", index, "toolCalls", call_index, "id"), call.id
        elif isinstance(message, ToolMessage):
            yield (*prefix, "messages", index, "toolCallId"), message.tool_call_id
    for index, entry in enumerate(run_input.resume or ()):
        yield (*prefix, "resume", index, "interruptId"), entry.interrupt_id


def chat_request_ids(chat: AiSdkChatRequest) -> Iterator[tuple[Loc, Any]]:
    """The ids of an AI SDK chat request (wire locations): the chat ``id`` (the thread),
    ``messageId``, each message ``id``, each tool part's ``toolCallId`` and the ``approval.id``
    of one in state ``approval-responded`` (an interrupt answer, claimed in the store)."""
    if chat.id is not None:
        yield ("id",), chat.id
    if chat.message_id is not None:
        yield ("messageId",), chat.message_id
    for index, message in enumerate(chat.messages):
        yield ("messages", index, "id"), message.id
        for part_index, part in enumerate(message.parts):
            if isinstance(part, ToolUIPart):
                yield ("messages", index, "parts", part_index, "toolCallId"), part.tool_call_id
                if part.state == "approval-responded" and part.approval is not None:
                    where = ("messages", index, "parts", part_index, "approval", "id")
                    yield where, part.approval.get("id")
