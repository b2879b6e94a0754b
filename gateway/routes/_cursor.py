"""Resume cursors bound to their run: the ``id:`` of an event on the wire is
``<epoch>.<seq>.<tag>``, where ``<tag>`` binds it to one run.

The store orders a run's events by ``(epoch, seq)`` (``docs/runs.md`` §1); those two numbers
alone cannot tell one run's cursor from another's when both are in range, so a client that
sends another run's ``Last-Event-ID`` would silently skip events. The tag is the first 6 bytes
of HMAC-SHA256 over the run's store key (tenant, thread and run id, :mod:`gateway.tenancy`),
base64url (8 characters), under a fixed key: it binds, it does not authenticate (who may read
the run is the door's business), so it stays the same across replicas, restarts and secret
rotations. A cursor whose tag is not the run's, or that has none, is ``400 INVALID_CURSOR``;
the numbers keep their meaning and order.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Final

from ..store import CursorMismatchError, InvalidCursorError
from ..types import Cursor

__all__ = ["TAG_KEY", "bind_cursor", "cursor_tag", "unbind_cursor"]

TAG_KEY: Final[bytes] = b"agui-gateway cursor tag v1"
"""The HMAC key of cursor tags (fixed: see the module docstring)."""


def cursor_tag(run_key: str) -> str:
    """The tag of the run whose store key is ``run_key`` (8 base64url characters)."""
    digest = hmac.new(TAG_KEY, run_key.encode(), hashlib.sha256).digest()[:6]
    return base64.urlsafe_b64encode(digest).decode()


def bind_cursor(cursor: Cursor, tag: str) -> str:
    """``<epoch>.<seq>.<tag>``: the wire form of ``cursor`` in the run tagged ``tag``."""
    return f"{cursor}.{tag}"


def unbind_cursor(text: str, run_key: str) -> str:
    """The ``<epoch>.<seq>`` of a client's cursor, after checking it is of this run.

    Raises:
        InvalidCursorError: not ``<epoch>.<seq>.<tag>``.
        CursorMismatchError: the tag is another run's.
    """
    numbers, dot, tag = text.strip(" \t\r\n").rpartition(".")
    if not dot or numbers.count(".") != 1:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise InvalidCursorError(f"malformed event id {shown!r}: expected '<epoch>.<seq>.<tag>'")
    if not hmac.compare_digest(tag, cursor_tag(run_key)):
        raise CursorMismatchError("event id is not of this run")
    return numbers
