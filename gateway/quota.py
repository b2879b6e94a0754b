"""A run's share of its tenant's storage quota, enforced while it streams (issue 15 §3).

Before a run starts, :class:`~gateway.services.Services` refuses it (429
``STORAGE_QUOTA_EXCEEDED``) when its tenant's stored runs already hold
``GATEWAY_QUOTA_STORED_BYTES``. A run that starts gets the rest as its share; :func:`capped`
counts the JSON bytes of the events it produces, and when the next event would pass the share
it stops reading the upstream and raises :class:`StorageQuotaExceeded`: the pump then closes
what is open and ends the run with ``RUN_ERROR {code: "STORAGE_QUOTA_EXCEEDED"}``. Everything
stored before stays (nothing is deleted or rewritten); the closing events and the RUN_ERROR
are the only bytes written past the share. A content delta (text, reasoning, tool arguments)
counts twice: it is stored as an event and again in the run's history item, where the run's
messages are folded.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Final

import orjson
from ag_ui.core import Event

from agui_codecs.events import event_to_wire

from .types import JsonObject

__all__ = ["QUOTA_CODE", "RUN_RESERVE", "StorageQuotaExceeded", "capped"]

QUOTA_CODE: Final[str] = "STORAGE_QUOTA_EXCEEDED"

RUN_RESERVE: Final[int] = 2048
"""Bytes a starting run is assumed to need besides its input (RUN_STARTED, the terminal event,
its history item): counted when the quota is checked, so a stream of runs that fail at once
stops under the quota."""

_FOLDED: Final[frozenset[str]] = frozenset(
    {"TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "TOOL_CALL_ARGS"}
)


class StorageQuotaExceeded(Exception):
    """The run's events passed its share of the tenant's storage quota."""

    code = QUOTA_CODE

    def __init__(self, share: int) -> None:
        self.message = f"the run reached its tenant's storage quota ({share} bytes left)"
        super().__init__(self.message)


async def capped(
    batches: AsyncIterator[list[Event]], share: int
) -> AsyncGenerator[list[JsonObject], None]:
    """``batches`` (the pipeline's, :func:`gateway.pipeline.staged`) as wire dicts, until their
    JSON size would pass ``share`` bytes: the events of the batch before that one, then
    :class:`StorageQuotaExceeded` (closing ``batches``, so the upstream request ends). Each
    event is turned into its wire dict once, here, and the pump takes it as it is
    (:class:`~gateway.runs.RunPump`)."""
    used = 0
    async with aclosing(batches):  # type: ignore[type-var]
        async for batch in batches:
            out: list[JsonObject] = []
            for event in batch:
                wire = event_to_wire(event)
                size = len(orjson.dumps(wire))
                used += 2 * size if wire["type"] in _FOLDED else size
                if used > share:
                    if out:
                        yield out
                    raise StorageQuotaExceeded(share)
                out.append(wire)
            yield out
