"""Legal transitions of an AG-UI 1.0 run and of an AI SDK UIMessageChunk stream, as data.

One table per protocol says which event may follow which; two small trackers apply the tables
to a stream of wire dicts (camelCase keys, the JSON a client parses). The conformance kit
(``conformance/``) reports every :class:`Fault` the trackers find, and the ``agui`` decoder
uses the AG-UI tracker as a last guard, so the gateway cannot emit what its checker rejects.

* :mod:`.agui`: AG-UI (``@ag-ui/client`` 1.0.0 ``src/verify/verify.ts``) -- :data:`RUN_TABLE`,
  :data:`LIFECYCLES` and :class:`AguiVerifier`;
* :mod:`.ai_sdk`: AI SDK ``UIMessageChunk`` (``ai`` ``process-ui-message-stream.ts``) --
  :data:`UI_MAJORS`, :data:`UI_PARTS` and :class:`UiChunkTracker`.

A tracker never raises on bad input: ``step`` returns the fault and then applies the event the
way the client would have, had it not stopped, so one defect is reported once.
"""

from __future__ import annotations

from .agui import (
    AGUI_TERMINAL,
    ANY,
    LIFECYCLE_BY_EVENT,
    LIFECYCLES,
    RUN_TABLE,
    AguiVerifier,
    Fault,
    Finding,
    Lifecycle,
    Phase,
)
from .ai_sdk import PORTABLE_FINISH_REASONS, UI_MAJORS, UI_PARTS, UiChunkTracker, UiFault, UiMajor

__all__ = [
    "AGUI_TERMINAL",
    "ANY",
    "LIFECYCLES",
    "LIFECYCLE_BY_EVENT",
    "PORTABLE_FINISH_REASONS",
    "RUN_TABLE",
    "UI_MAJORS",
    "UI_PARTS",
    "AguiVerifier",
    "Fault",
    "Finding",
    "Lifecycle",
    "Phase",
    "UiChunkTracker",
    "UiFault",
    "UiMajor",
]
