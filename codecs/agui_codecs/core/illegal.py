"""Strict mode: producers check what they emit against the AG-UI transition tables.

The tables (:data:`agui_codecs.transitions.RUN_TABLE`, :data:`~agui_codecs.transitions.LIFECYCLES`,
applied by :class:`~agui_codecs.transitions.AguiVerifier`; ``@ag-ui/client`` 1.0.0
``src/verify/verify.ts``) say which event may follow which. A producer that holds a
:class:`TransitionGuard` passes every event it emits through :meth:`TransitionGuard.check`,
which raises :class:`~agui_codecs.errors.IllegalEventError` naming the fault instead of letting
an illegal event out (or of dropping it without a word).

Checking costs a verifier step per event, so it is off by default and on in strict mode:
``AGUI_CODECS_STRICT=1`` in the environment (the test suite sets it) or :func:`strict`.

Outside strict mode a producer that meets an event the tables forbid applies a documented
repair that loses no content (an END of something never opened: nothing to close; content
for an unopened item: the item is opened first) and notes it in a :class:`Repairs` counter,
keyed by the fault the tables name for it (:func:`lifecycle_fault`), with one log line on the
``agui_codecs`` logger. The encoders (``agui_codecs.encoders``) do both.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Mapping
from typing import Any, Final

from ..errors import IllegalEventError
from ..transitions import ANY, LIFECYCLE_BY_EVENT, RUN_TABLE, AguiVerifier, Fault, Finding, Phase
from .chunks import CHUNK_TYPES, ChunkError, ChunkExpander

__all__ = [
    "IllegalEventError",
    "Repairs",
    "TransitionGuard",
    "check_transition",
    "guard",
    "lifecycle_fault",
    "strict",
]

_log = logging.getLogger("agui_codecs")

_STRICT = [os.environ.get("AGUI_CODECS_STRICT", "") not in ("", "0")]


def strict(on: bool | None = None) -> bool:
    """Whether producers built from now on check their events; ``on`` sets it."""
    if on is not None:
        _STRICT[0] = on
    return _STRICT[0]


def check_transition(verifier: AguiVerifier, event: Mapping[str, Any]) -> None:
    """Step ``verifier`` with the wire event ``event``; raise when the tables forbid it.

    Raises:
        IllegalEventError: the fault ``verifier`` found (the state is left as before).
    """
    found: Finding | None = verifier.step(event, apply_faulty=False)
    if found is not None:
        raise IllegalEventError(found.fault.value, str(event.get("type")), found.message, found.ids)


class TransitionGuard:
    """A verifier a producer steps with every event it emits or reads (see the module
    docstring).

    ``*_CHUNK`` events are expanded first (:class:`~agui_codecs.core.chunks.ChunkExpander`,
    the client's ``transformChunks``), since the tables speak of START/CONTENT/END.

    Args:
        from_run_started: check nothing before the first RUN_STARTED (a stream resumed from
            a cursor starts inside a run whose beginning this guard never saw; it is checked
            from its next run on).
    """

    __slots__ = ("_armed", "_chunks", "verifier")

    def __init__(self, *, from_run_started: bool = False) -> None:
        self.verifier = AguiVerifier()
        self._chunks: ChunkExpander | None = None
        self._armed = not from_run_started

    def check(self, event: Mapping[str, Any]) -> None:
        """:func:`check_transition` on this guard's verifier (chunks expanded first).

        Raises:
            IllegalEventError: the fault found; for a chunk the client's expansion rejects,
                ``fault`` is ``chunks/<rule>`` (``ChunkError.rule``).
        """
        etype = event.get("type")
        if not self._armed:
            if etype != "RUN_STARTED":
                return
            self._armed = True
        if etype in CHUNK_TYPES or (self._chunks is not None and self._chunks.lanes):
            saved = self.verifier._snapshot(), copy.deepcopy(self._chunks)
            if self._chunks is None:
                self._chunks = ChunkExpander()
            try:
                for ev in self._chunks.expand(dict(event)):
                    check_transition(self.verifier, ev)
            except ChunkError as exc:
                self.verifier._restore(saved[0])
                self._chunks = saved[1]
                raise IllegalEventError(
                    f"chunks/{exc.rule}", str(etype), exc.message, exc.ids
                ) from None
            except IllegalEventError:
                self.verifier._restore(saved[0])  # a refused event changes nothing
                self._chunks = saved[1]
                raise
            return
        check_transition(self.verifier, event)


def guard(*, from_run_started: bool = False) -> TransitionGuard | None:
    """A new :class:`TransitionGuard` in strict mode, else None."""
    return TransitionGuard(from_run_started=from_run_started) if _STRICT[0] else None


_ROLE_FAULT: Final = {"open": 0, "continue": 1, "close": 2}


def lifecycle_fault(event_type: str, *, ended: bool = False, errored: bool = False) -> Fault:
    """The fault the tables name for ``event_type`` met in the wrong state.

    For a lifecycle event (:data:`~agui_codecs.transitions.LIFECYCLE_BY_EVENT`): its opener's
    fault (the entity is already open) or its continuation's / closer's (it is not open). With
    ``ended`` (after RUN_FINISHED) or ``errored`` (after RUN_ERROR): the run-level fault of
    :data:`~agui_codecs.transitions.RUN_TABLE` for any event.

    Raises:
        KeyError: ``event_type`` has no lifecycle fault (and neither flag is set).
    """
    if ended or errored:
        phase = Phase.ERRORED if errored else Phase.FINISHED
        found = RUN_TABLE.get((phase, event_type), RUN_TABLE[(phase, ANY)])
        if isinstance(found, Fault):
            return found
        raise KeyError(event_type)
    lifecycle, role = LIFECYCLE_BY_EVENT[event_type]
    fault = lifecycle.faults[_ROLE_FAULT[role]]
    if fault is None:
        raise KeyError(event_type)
    return fault


class Repairs:
    """What a producer repaired outside strict mode, counted by fault.

    Attributes:
        counts: fault value (``agui/verify/<value>``, or a producer's own key) -> how many
            times it was repaired.
        owner: who repairs (for the log line), e.g. ``"ai-sdk encoder"``.
    """

    __slots__ = ("counts", "owner")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.counts: dict[str, int] = {}

    def note(self, fault: Fault | str, event_type: str, ids: tuple[str, ...], repair: str) -> None:
        """Count one repair of ``fault`` at an ``event_type`` event and log what was done
        (``fault``: a :class:`~agui_codecs.transitions.Fault`, or the producer's own key for
        an event the tables allow and the output format cannot carry)."""
        key = fault.value if isinstance(fault, Fault) else fault
        self.counts[key] = self.counts.get(key, 0) + 1
        _log.info("%s: %s at %s %s: %s", self.owner, key, event_type, ", ".join(ids), repair)

    @property
    def total(self) -> int:
        """All repairs so far."""
        return sum(self.counts.values())
