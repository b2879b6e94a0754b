"""Stray tool arguments the ``agui`` normalizer holds: TOOL_CALL_ARGS of calls not opened yet.

``@ag-ui/client`` 1.0.0 ``src/verify/verify.ts`` rejects TOOL_CALL_ARGS for a call that is not
in progress ("no tool call in progress"); the normalizer neither drops nor invents a call for
them (a made-up tool name would be executed by a frontend): it holds them here until the
call's TOOL_CALL_START (:class:`~agui_codecs.protocols.agui._normalizer.AguiNormalizer`).
"""

from __future__ import annotations

from typing import Any, Final

from ...errors import MalformedUpstreamError

__all__ = ["HOLD_STRAY_BYTES", "StrayArgs"]

Wire = dict[str, Any]

HOLD_STRAY_BYTES: Final = 1 << 20
"""UTF-8 bytes of ``delta`` held in TOOL_CALL_ARGS (and nameless TOOL_CALL_CHUNKs) of calls
not opened yet, waiting for their TOOL_CALL_START; one more is
:class:`~agui_codecs.errors.MalformedUpstreamError` (``UPSTREAM_MALFORMED``), the held events in
the RUN_ERROR's ``metadata.unsent``."""


class StrayArgs:
    """TOOL_CALL_ARGS wire events of calls not opened yet, by call id (``""``: no id), held
    until :meth:`release`; at most :data:`HOLD_STRAY_BYTES` of deltas."""

    def __init__(self) -> None:
        self._held: dict[str, list[tuple[int, Wire]]] = {}
        self._bytes = 0
        self._seq = 0

    def __bool__(self) -> bool:
        return bool(self._held)

    def hold(self, ev: Wire) -> None:
        """Hold ``ev`` (a TOOL_CALL_ARGS wire dict, ``delta`` a string).

        Raises:
            MalformedUpstreamError: the held deltas pass :data:`HOLD_STRAY_BYTES` (``ev`` is
                held too: :meth:`events` lists it).
        """
        cid = ev.get("toolCallId") or ""
        self._seq += 1
        self._held.setdefault(cid, []).append((self._seq, {**ev, "toolCallId": cid}))
        self._bytes += len(ev["delta"].encode())
        if self._bytes > HOLD_STRAY_BYTES:
            raise MalformedUpstreamError(
                f"more than {HOLD_STRAY_BYTES} bytes of TOOL_CALL_ARGS held for tool calls "
                "never opened"
            )

    def release(self, cid: str) -> list[Wire]:
        """The events held for call ``cid`` (its TOOL_CALL_START was sent), in order."""
        held = [ev for _, ev in self._held.pop(cid, ())]
        self._bytes -= sum(len(ev["delta"].encode()) for ev in held)
        return held

    def events(self) -> list[Wire]:
        """Every event still held, in arrival order."""
        return [ev for _, ev in sorted((e for held in self._held.values() for e in held),
                                       key=lambda pair: pair[0])]  # fmt: skip

    def summary(self) -> str:
        """``'c1' (12 bytes), ...``: the held arguments by call, for an error message."""
        return ", ".join(
            f"{cid!r} ({sum(len(ev['delta'].encode()) for _, ev in held)} bytes)"
            for cid, held in self._held.items()
        )
