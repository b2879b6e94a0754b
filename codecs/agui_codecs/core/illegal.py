"""Strict mode: producers check what they emit against the AG-UI transition tables.

The tables (:data:`agui_codecs.transitions.RUN_TABLE`, :data:`~agui_codecs.transitions.LIFECYCLES`,
applied by :class:`~agui_codecs.transitions.AguiVerifier`; ``@ag-ui/client`` 1.0.0
``src/verify/verify.ts``) say which event may follow which. A producer that holds a
:class:`TransitionGuard` passes every event it emits through :meth:`TransitionGuard.check`,
which raises :class:`~agui_codecs.errors.IllegalEventError` naming the fault instead of letting
an illegal event out (or of dropping it without a word).

Checking costs a verifier step per event, so it is off by default and on in strict mode:
``AGUI_CODECS_STRICT=1`` in the environment (the test suite sets it) or :func:`strict`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import IllegalEventError
from ..transitions import AguiVerifier, Finding

__all__ = ["IllegalEventError", "TransitionGuard", "check_transition", "guard", "strict"]

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
    """A verifier a producer steps with every event it emits (see the module docstring)."""

    __slots__ = ("verifier",)

    def __init__(self) -> None:
        self.verifier = AguiVerifier()

    def check(self, event: Mapping[str, Any]) -> None:
        """:func:`check_transition` on this guard's verifier."""
        check_transition(self.verifier, event)


def guard() -> TransitionGuard | None:
    """A new :class:`TransitionGuard` in strict mode, else None."""
    return TransitionGuard() if _STRICT[0] else None
