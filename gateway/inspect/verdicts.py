"""The conformance kit's verdicts on a run's stored events, for the inspector.

The kit (:class:`conformance.AguiChecker`, the ``@ag-ui/client`` 1.0.0 profile) reads the
stored wire dicts in order, as the stock client would read the events endpoint; each finding
is attached to the cursor of the event it was found at, so the page highlights that event. A
live run is checked without the end-of-stream checks (``agui/hygiene/no-terminal-event`` is
not a finding while the run goes on); an ended run gets them. Nothing of the rules is ported
to the page: this is their one home.

The state is the one a client holds after these events, as the codec library's one reducer
folds it (:meth:`agui_codecs.core.RunFold.state`: AG-UI 1.0 ``STATE_SNAPSHOT`` replaces it,
``STATE_DELTA`` applies an RFC 6902 patch; a patch that does not apply leaves the state as it
was, as ``@ag-ui/client`` does, and the kit reports ``agui/hygiene/state-patch-failed``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonpatch

from agui_codecs.core import RunFold
from conformance import AguiChecker, Violation

from ..types import JsonObject, RunEvent

__all__ = ["RunVerdicts", "run_verdicts"]


@dataclass(slots=True)
class RunVerdicts:
    """The kit's findings on one run's stored events.

    Attributes:
        profile: the client profile checked (``agui``: ``@ag-ui/client`` 1.0.0).
        events: how many stored events were read.
        last_cursor: the wire cursor of the last one (None when none).
        findings: ``(wire cursor or None, violation)`` in the order found; None for a
            stream-level finding (the end-of-stream checks).
        state: the state after the events (None when no STATE_* event came).
        has_state: a STATE_SNAPSHOT or an applied STATE_DELTA set :attr:`state`.
    """

    profile: str
    events: int = 0
    last_cursor: str | None = None
    findings: list[tuple[str | None, Violation]] = field(default_factory=list)
    state: Any = None
    has_state: bool = False

    @property
    def rejected(self) -> bool:
        """True when the stock client would reject the run (an error-level finding)."""
        return any(v.severity == "error" for _, v in self.findings)

    def to_json(self) -> JsonObject:
        """``{profile, events, lastCursor, rejected, findings: [{cursor, index, rule,
        severity, message, ids}], state?}`` (``state`` only when one was set)."""
        body: JsonObject = {
            "profile": self.profile,
            "events": self.events,
            "lastCursor": self.last_cursor,
            "rejected": self.rejected,
            "findings": [
                {
                    "cursor": cursor,
                    "index": v.index,
                    "rule": v.rule_id,
                    "severity": v.severity,
                    "message": v.message,
                    "ids": list(v.ids),
                }
                for cursor, v in self.findings
            ],
        }
        if self.has_state:
            body["state"] = self.state
        return body


def run_verdicts(
    events: Iterable[RunEvent], *, ended: bool, wire_cursor: Callable[[RunEvent], str]
) -> RunVerdicts:
    """Check ``events`` (a run's stored events, in order) with the kit.

    Args:
        events: the run's events from its first.
        ended: the run is terminal: run the end-of-stream checks too.
        wire_cursor: the SSE ``id`` of an event (``<epoch>.<seq>.<tag>``, what the page sees).

    Returns:
        The verdicts; a finding's cursor is that of the event at its ``index``.
    """
    checker = AguiChecker("<stored run>")
    verdicts = RunVerdicts(profile=checker.report.profile)
    cursors: list[str] = []
    fold = RunFold()
    for run_event in events:
        cursor = wire_cursor(run_event)
        cursors.append(cursor)
        for violation in checker.feed_payload(run_event.event):
            verdicts.findings.append((_at(cursors, violation), violation))
        fold.apply(run_event.event)
    if ended:
        for violation in checker.finish():
            verdicts.findings.append((_at(cursors, violation), violation))
    verdicts.events = len(cursors)
    verdicts.last_cursor = cursors[-1] if cursors else None
    verdicts.has_state, verdicts.state = fold.state(_patch)
    return verdicts


def _at(cursors: list[str], violation: Violation) -> str | None:
    index = violation.index
    return cursors[index] if index is not None and 0 <= index < len(cursors) else None


def _patch(state: Any, delta: list[Any]) -> Any:
    """RFC 6902 for :meth:`RunFold.state`: python-json-patch, its failures as ValueError."""
    try:
        return jsonpatch.JsonPatch(delta).apply(state, in_place=True)
    except (
        jsonpatch.JsonPatchException,
        jsonpatch.JsonPointerException,
        TypeError,
        KeyError,
        IndexError,
        ValueError,
    ) as exc:
        raise ValueError(str(exc)) from exc
