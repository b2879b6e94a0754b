"""The state an AG-UI client holds, event by event: the one state reducer of the core.

AG-UI 1.0 (``@ag-ui/client`` 1.0.0 ``src/apply/default.ts``): STATE_SNAPSHOT replaces the
state; STATE_DELTA applies its RFC 6902 ``delta`` atomically (fast-json-patch
``applyPatch``), and a delta that does not apply leaves the state as it was. Until a snapshot
(or a starting state, RunAgentInput ``state``) has shown the state, it is unknown and deltas
are not applied.

Used by :meth:`agui_codecs.core.fold.RunFold.state` (history, the inspector) and by the
conformance kit's silent-loss check (``agui/hygiene/state-patch-failed``). The codec library
has no RFC 6902 code of its own: the caller passes ``patch`` (e.g. python-json-patch).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final

__all__ = ["ClientState"]

_FAIL_BEFORE_CHANGE: Final = frozenset({"add", "remove", "replace", "test"})
"""RFC 6902 operations that fail before they change the document (``move`` and ``copy``
remove or read first and may fail after): a one-operation delta of these kinds is applied in
place, anything else to a copy, so a failing delta never leaves a half-applied state."""


class ClientState:
    """The state one client holds (see the module docstring).

    Args:
        patch: ``patch(state, delta) -> new state``, an RFC 6902 implementation; it may change
            ``state`` in place and raises one of ``errors`` when the delta does not apply.
        errors: the exceptions that mean "does not apply" (anything else propagates).

    Attributes:
        known: whether a snapshot or starting state has shown the state.
        value: the state (``None`` while unknown).
    """

    __slots__ = ("_errors", "_patch", "known", "value")

    def __init__(
        self,
        patch: Callable[[Any, list[Any]], Any],
        errors: tuple[type[BaseException], ...] = (ValueError,),
    ) -> None:
        self._patch = patch
        self._errors = errors
        self.known = False
        self.value: Any = None

    def snapshot(self, snapshot: Any) -> None:
        """STATE_SNAPSHOT ``snapshot`` (or RunAgentInput ``state``): the state is this (a copy)."""
        self.known = True
        self.value = copy.deepcopy(snapshot)

    def delta(self, delta: Any) -> BaseException | None:
        """STATE_DELTA ``delta``: apply it; the error when it does not apply (the state is then
        kept), ``None`` when it applied or there was nothing to apply it to (state unknown, or
        ``delta`` not a list)."""
        if not self.known or not isinstance(delta, list):
            return None
        in_place = len(delta) == 1 and _op(delta[0]) in _FAIL_BEFORE_CHANGE
        target = self.value if in_place or not delta else copy.deepcopy(self.value)
        try:  # the delta copied too: an added value must not stay shared with the event
            self.value = self._patch(target, copy.deepcopy(delta))
        except self._errors as exc:
            return exc
        return None


def _op(operation: Any) -> Any:
    return operation.get("op") if isinstance(operation, dict) else None
