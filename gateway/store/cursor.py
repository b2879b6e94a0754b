"""Parsing resume cursors: ``<epoch>.<seq>``, the ``id:`` of every durable event of a run.

The :class:`~gateway.types.Cursor` value lives in the neutral :mod:`gateway.types` (the broker
uses it too); this module is where client text becomes one, refused with the store's
:class:`~gateway.store.errors.InvalidCursorError` (400 ``INVALID_CURSOR``).

Design (``docs/runs.md`` §1 cursors and §2 latency against durability):

* ``seq`` is assigned once, by the run's single producer: 1, 2, 3... per run. The store
  enforces that a batch continues the run's last durable seq by steps of one.
* ``epoch`` is the producer's lease epoch: 1 for the first producer, +1 at each takeover.
  A producer may publish deltas before they are durable; if it dies, the replica that closes
  the run starts a new epoch and continues from the last *durable* seq, so its cursors
  (``2.51``...) differ from anything the dead producer could have published (``1.51``...).
* Cursors order as ``(epoch, seq)`` tuples. A resume from a dead epoch's cursor that is past
  the durable end (``1.57`` when epoch 1 ended at 50) therefore continues at the first event of
  the next epoch. Within the store, seq alone orders events (epochs never decrease with seq).

Clients treat the cursor as opaque; only the gateway parses it.
"""

from __future__ import annotations

import re
from typing import Final

from ..types import MAX_CURSOR_PART, Cursor
from .errors import InvalidCursorError

__all__ = ["MAX_CURSOR_PART", "Cursor", "parse_cursor"]

_CURSOR_RE: Final[re.Pattern[str]] = re.compile(r"([1-9][0-9]{0,15})\.([1-9][0-9]{0,15})")


def parse_cursor(text: str) -> Cursor:
    """Parse a cursor string as sent in ``Last-Event-ID`` or ``?lastEventId=``.

    Leading/trailing ASCII whitespace is ignored; anything else that is not two positive
    decimal integers (no sign, no leading zero, at most 16 digits, each <= 2**53-1) joined by
    one ``.`` is refused.

    Raises:
        InvalidCursorError: the text is not a cursor.
    """
    if not isinstance(text, str):
        raise InvalidCursorError("cursor must be a string")
    match = _CURSOR_RE.fullmatch(text.strip(" \t\r\n"))
    if match is None:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise InvalidCursorError(f"malformed event id {shown!r}: expected '<epoch>.<seq>'")
    epoch, seq = int(match.group(1)), int(match.group(2))
    if epoch > MAX_CURSOR_PART or seq > MAX_CURSOR_PART:
        raise InvalidCursorError(f"event id {text!r} is out of range")
    return Cursor(epoch, seq)
