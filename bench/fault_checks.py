"""The verdict of one fault trial (``bench/fault_trials.py``): what one client received,
against the run as stored and against what the mock upstream sends. Pure functions, no I/O.

The contract judged is docs/runs.md: §2 (deltas are published before they are durable; after a
producer died, what may be missing from the store is only ever deltas, and the run is closed in
a newer epoch whose cursors sort after the dead producer's), §3 (a resumed reader gets exactly
what it missed: no gap, no duplicate), §6 (every run ends; a store outage longer than
``GATEWAY_STORE_OUTAGE_GRACE`` ends live readers with RUN_ERROR ``STORE_UNAVAILABLE``, a
shorter one loses nothing).

Counts of a :class:`Verdict`:

* ``lost``: a stored event at or before the client's last cursor that the client never got,
  or got with other content; a gap in the upstream's token numbers (``" tok0"``,
  ``" tok1"``, ... of ``bench/mock_upstream.py``) in the client's text; a control event the
  client got that the store does not hold (only deltas may be lost, §2; the pump's published
  closing events of a long store outage are the one allowed case); and, for trials whose run
  must complete (a short outage), every upstream token missing from the client's text.
* ``duplicated``: a repeated SSE ``id:``, a repeated token number, a control event repeated
  (same ``type`` and ``messageId`` / ``toolCallId``).
* ``never_ended``: the client's last event is not RUN_FINISHED / RUN_ERROR, or the stored run
  has no terminal event or status.
* ``illegal``: the client's events or the stored run are not legal AG-UI (the ``conformance``
  checker, ``@ag-ui/client`` 1.0.0 verify rules).
* ``unstored_deltas`` (reported, allowed by §2): deltas the client got that the store lacks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from durable_support import Frame, frame_bytes

from conformance import check_bytes
from gateway.runs.writer import BATCHED_TYPES

__all__ = ["TERMINAL", "TERMINAL_STATUSES", "Verdict", "judge", "token_text"]

TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
TERMINAL_STATUSES = ("completed", "failed", "cancelled", "interrupted")
_TOKEN = re.compile(r" tok(\d+)")


def token_text(count: int) -> str:
    """The whole text the mock upstream streams for ``events=count``."""
    return "".join(f" tok{k}" for k in range(count))


def _cursor(wire_id: str) -> tuple[int, int]:
    epoch, seq, _tag = wire_id.split(".", 2)
    return int(epoch), int(seq)


def _control_key(event: dict[str, Any]) -> tuple[str, str | None]:
    return event["type"], event.get("messageId") or event.get("toolCallId")


@dataclass
class Verdict:
    """The counts of one client of one trial (module docstring); ``notes`` say what was
    counted, for the progress line and the logs."""

    lost: int = 0
    duplicated: int = 0
    never_ended: int = 0
    illegal: int = 0
    unstored_deltas: int = 0
    typed_store_error: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.lost or self.duplicated or self.never_ended or self.illegal)


def judge(
    received: Sequence[Frame],
    stored: Sequence[tuple[str, dict[str, Any]]],
    status: str | None,
    *,
    upstream_tokens: int,
    must_complete: bool,
    unstored_control_allowed: bool,
) -> Verdict:
    """Judge one client's events.

    Args:
        received: every event frame the client got over all its connections, in order;
            frames without an ``id:`` (a reader's own RUN_ERROR ``STORE_UNAVAILABLE``, which
            the client answers by resuming) are not part of the run and only mark
            ``typed_store_error``.
        stored: the stored run as ``(wire id, event)`` (``<epoch>.<seq>.<tag>``), in order.
        status: the stored run's status (None: no record).
        upstream_tokens: how many tokens the mock upstream streams for this run.
        must_complete: the run must have finished with the whole upstream text (short
            outages).
        unstored_control_allowed: control events may be missing from the store (the pump's
            published closing events of a store outage past the grace).
    """
    verdict = Verdict()
    view = [f for f in received if f.id is not None]
    verdict.typed_store_error = any(
        f.event == "RUN_ERROR"
        and isinstance(f.data, dict)
        and f.data.get("code") == "STORE_UNAVAILABLE"
        for f in received
    )
    ids = [f.id for f in view if f.id is not None]
    if len(ids) != len(set(ids)):
        verdict.duplicated += len(ids) - len(set(ids))
        verdict.notes.append("repeated id")
    seen_controls: set[tuple[str, str | None]] = set()
    for frame in view:
        event = frame.data
        if event["type"] in BATCHED_TYPES:
            continue
        key = _control_key(event)
        if key in seen_controls:
            verdict.duplicated += 1
            verdict.notes.append(f"repeated {key}")
        seen_controls.add(key)

    text = "".join(
        f.data.get("delta", "") for f in view if f.data["type"] == "TEXT_MESSAGE_CONTENT"
    )
    tokens = [int(t) for t in _TOKEN.findall(text)]
    if len(tokens) != len(set(tokens)):
        verdict.duplicated += len(tokens) - len(set(tokens))
        verdict.notes.append("repeated token")
    got = set(tokens)
    top = max(got, default=-1)
    gaps = sum(1 for k in range(top + 1) if k not in got)
    if gaps:
        verdict.lost += gaps
        verdict.notes.append(f"{gaps} token gaps")
    if _TOKEN.sub("", text):
        verdict.lost += 1
        verdict.notes.append("text not made of upstream tokens")
    if must_complete and (status != "completed" or top + 1 < upstream_tokens):
        verdict.lost += max(1, upstream_tokens - len(got))
        verdict.notes.append(f"run must complete: status {status}, {len(got)} tokens")

    by_id = dict(stored)
    last = max((_cursor(i) for i in ids), default=(0, 0))
    for wire_id, event in stored:
        if _cursor(wire_id) > last:
            continue
        if wire_id not in ids:
            verdict.lost += 1
            verdict.notes.append(f"missed stored {wire_id} {event['type']}")
    for frame in view:
        assert frame.id is not None
        if frame.id in by_id:
            if by_id[frame.id] != frame.data:
                verdict.lost += 1
                verdict.notes.append(f"{frame.id} names another event in the store")
        elif frame.data["type"] in BATCHED_TYPES:
            verdict.unstored_deltas += 1
        elif not unstored_control_allowed:
            verdict.lost += 1
            verdict.notes.append(f"control {frame.id} {frame.data['type']} not stored")

    if not view or view[-1].data["type"] not in TERMINAL:
        verdict.never_ended += 1
        verdict.notes.append("client got no terminal event")
    if status not in TERMINAL_STATUSES or not stored or stored[-1][1]["type"] not in TERMINAL:
        verdict.never_ended += 1
        verdict.notes.append(f"stored run not ended (status {status})")

    for what, events in (
        ("client", [(f.id, f.data) for f in view]),
        ("stored", list(stored)),
    ):
        body = frame_bytes(Frame(i, e["type"], e) for i, e in events)
        errors = check_bytes(body, protocol="agui").errors
        if errors:
            verdict.illegal += 1
            first = errors[0]
            verdict.notes.append(f"{what} illegal: {first.rule_id} at {first.index}")
    return verdict
