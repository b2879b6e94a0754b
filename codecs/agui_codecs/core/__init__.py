"""The AG-UI semantics core: what a run's events mean, written once (pure, no I/O).

* :mod:`.chunks`: ``*_CHUNK`` expansion as the client does it (``@ag-ui/client`` 1.0.0
  ``src/chunks/transform.ts``, subagent lanes), used by the conformance kit and the fold;
* :mod:`.fold`: :class:`RunFold`, the one reducer of a run's wire events (open items, history
  parts, state, the closing events), used by the gateway's pump, reaper, snapshot prelude and
  history;
* :mod:`.guard`: :class:`StoreGuard`, the producer-side guard before the store: what of a
  run's events may be stored (legal events unchanged, repairs the tables allow, else the open
  items closed and RUN_ERROR ``UPSTREAM_PROTOCOL_ERROR``), used by the gateway's pump;
* :mod:`.illegal`: :class:`IllegalEventError`, what a producer raises in strict mode when it is
  asked for (or fed) an event the transition tables (:mod:`agui_codecs.transitions`) forbid,
  and :class:`Repairs`, what it counts instead outside strict mode.

The legality rules themselves (which event may follow which) are the tables of
:mod:`agui_codecs.transitions.agui`; ARCHITECTURE.md lists where each lifecycle rule lives.
"""

from __future__ import annotations

from .chunks import (
    CHUNK_TYPES,
    CHUNKS,
    CLOSE_ALL_LANES,
    CLOSE_OWN_LANE,
    CLOSE_SUBAGENT_LANE,
    KEEP_LANES,
    ChunkError,
    ChunkExpander,
    ChunkSpec,
    Lane,
)
from .fold import JsonObject, OpenReasoning, OpenText, OpenTool, RunFold, parse_json_text
from .guard import GUARD_ERROR_CODE, StoreGuard
from .illegal import (
    IllegalEventError,
    Repairs,
    TransitionGuard,
    check_transition,
    guard,
    lifecycle_fault,
    strict,
)

__all__ = [
    "CHUNKS",
    "CHUNK_TYPES",
    "CLOSE_ALL_LANES",
    "CLOSE_OWN_LANE",
    "CLOSE_SUBAGENT_LANE",
    "GUARD_ERROR_CODE",
    "KEEP_LANES",
    "ChunkError",
    "ChunkExpander",
    "ChunkSpec",
    "IllegalEventError",
    "JsonObject",
    "Lane",
    "OpenReasoning",
    "OpenText",
    "OpenTool",
    "Repairs",
    "RunFold",
    "StoreGuard",
    "TransitionGuard",
    "check_transition",
    "guard",
    "lifecycle_fault",
    "parse_json_text",
    "strict",
]
