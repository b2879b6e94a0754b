"""AG-UI checks beyond ``verifyEvents``: run identity, protocol version, and silent data loss.

:class:`AguiExtraChecks` sees every event after chunk expansion and verification (the events
the client's reducer, ``src/apply/default.ts`` of ``@ag-ui/client`` 1.0.0, would apply) and
returns findings ``(rule id, message, ids, severity or None)``; the checker gives them the
profile's severity unless a finding names its own. What it checks:

* ``RUN_STARTED.protocolVersion`` against the profile's version (``src/agent/agent.ts``
  ``warnOnProducerDeclaration``: absent is quiet, newer and uninterpretable warn);
* run identity (the 1.1 draft, ``spec/draft/basic/run-input``): RUN_FINISHED's runId and
  threadId equal its RUN_STARTED's, every run of a stream on one thread; interrupt ids of a
  RUN_FINISHED outcome unique (``spec/draft/basic/patterns/interrupt-resume``);
* silent loss: a STATE_DELTA that does not apply to the state the client holds (it keeps the
  old state, ``jsonpatch.applyPatch`` of fast-json-patch, applied here with python-json-patch),
  RUN_ERROR after RUN_FINISHED, timestamps in seconds, a MESSAGES_SNAPSHOT that drops a
  message streamed in this run and re-adds its text under a new id (the reducer reconciles by
  id).

State is tracked only once the stream has shown it (a STATE_SNAPSHOT, or RUN_STARTED's
``input.state``): before that the client's state is unknown. Every check is O(size of the
event); a multi-operation patch copies the state once (the client's patch is atomic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import jsonpatch
import jsonpointer

from agui_codecs.core.state import ClientState

from .profiles import AguiProfile
from .rules import Severity

__all__ = ["AguiExtraChecks", "Finding"]

Finding = tuple[str, str, tuple[str, ...], Severity | None]

_SECONDS_BOUND: Final = 10**11
"""A positive timestamp below this is seconds: 10**11 ms is March 1973, 10**11 s is year 5138."""
_PATCH_ERRORS: Final = (
    jsonpatch.JsonPatchException,
    jsonpointer.JsonPointerException,
    TypeError,
    KeyError,
    IndexError,
    ValueError,
)
"""What python-json-patch raises for a delta that does not apply to the state."""


def _patch(state: Any, delta: list[Any]) -> Any:
    return jsonpatch.JsonPatch(delta).apply(state, in_place=True)


class AguiExtraChecks:
    """The checks of this module for one stream under one profile."""

    def __init__(self, profile: AguiProfile) -> None:
        self.profile = profile
        self._thread: str | None = None
        self._run: tuple[Any, Any] | None = None
        self._finished = False
        self._timestamp_warned = False
        self._state = ClientState(_patch, _PATCH_ERRORS)
        self._known_ids: set[str] = set()
        self._streamed: dict[str, list[str]] = {}  # text message id -> deltas (this run)
        self._texts: dict[str, str] = {}  # text message id -> its text once ended (this run)

    def event(self, ev: Mapping[str, Any]) -> list[Finding]:
        """Check one verified AG-UI event (wire dict, after chunk expansion)."""
        out: list[Finding] = []
        etype = ev.get("type")
        stamp = ev.get("timestamp")
        if (
            isinstance(stamp, int)
            and not isinstance(stamp, bool)
            and 0 < stamp < _SECONDS_BOUND
            and not self._timestamp_warned
        ):
            self._timestamp_warned = True
            out.append(
                (
                    "agui/hygiene/timestamp-in-seconds",
                    f"{etype}.timestamp {stamp} is {stamp} ms after 1970: AG-UI timestamps are "
                    "milliseconds",
                    (),
                    None,
                )
            )
        handler = _HANDLERS.get(str(etype))
        if handler is not None:
            out += handler(self, ev)
        return out

    # -- lifecycle ------------------------------------------------------------------------------
    def _run_started(self, ev: Mapping[str, Any]) -> list[Finding]:
        out: list[Finding] = []
        declared = ev.get("protocolVersion")
        if declared is None:
            out.append(
                (
                    "agui/hygiene/missing-protocol-version",
                    f"RUN_STARTED declares no protocolVersion (this client speaks "
                    f"{self.profile.version})",
                    (),
                    None,
                )
            )
        elif isinstance(declared, str):
            verdict = self.profile.compare(declared)
            if verdict == "uninterpretable":
                out.append(
                    (
                        "agui/hygiene/protocol-version-uninterpretable",
                        f"protocolVersion {declared!r} is not MAJOR.MINOR: the client cannot "
                        "interpret it",
                        (),
                        None,
                    )
                )
            elif verdict in ("newer", "newer-minor"):
                severity: Severity | None = "warning" if verdict == "newer" else None
                out.append(
                    (
                        "agui/hygiene/protocol-version-newer",
                        f"protocolVersion {declared!r} is newer than the client's "
                        f"{self.profile.version}: it warns and strips what it does not know",
                        (),
                        severity,
                    )
                )
        thread = ev.get("threadId")
        if isinstance(thread, str):
            if self._thread is None:
                self._thread = thread
            elif thread != self._thread:
                out.append(
                    (
                        "agui/lifecycle/second-thread",
                        f"RUN_STARTED on thread {thread!r}: the stream's runs are on "
                        f"{self._thread!r}",
                        (thread,),
                        None,
                    )
                )
        self._run = (ev.get("threadId"), ev.get("runId"))
        self._finished = False
        self._streamed.clear()
        self._texts.clear()
        inp = ev.get("input")
        if isinstance(inp, Mapping):
            if "state" in inp:
                self._state.snapshot(inp["state"])
            self._note(inp.get("messages"))
        return out

    def _run_finished(self, ev: Mapping[str, Any]) -> list[Finding]:
        out: list[Finding] = []
        if self._run is not None:
            thread, run = self._run
            if isinstance(run, str) and ev.get("runId") != run:
                out.append(
                    (
                        "agui/lifecycle/run-id-mismatch",
                        f"RUN_FINISHED runId {ev.get('runId')!r} and RUN_STARTED runId {run!r} "
                        "must agree on their runId",
                        (run,),
                        None,
                    )
                )
            if isinstance(thread, str) and ev.get("threadId") != thread:
                out.append(
                    (
                        "agui/lifecycle/thread-id-mismatch",
                        f"RUN_FINISHED threadId {ev.get('threadId')!r} differs from "
                        f"RUN_STARTED's {thread!r}: both carry the input's threadId",
                        (thread,),
                        None,
                    )
                )
        outcome = ev.get("outcome")
        if isinstance(outcome, Mapping) and outcome.get("type") == "interrupt":
            seen: set[str] = set()
            for item in outcome.get("interrupts") or []:
                iid = item.get("id") if isinstance(item, Mapping) else None
                if isinstance(iid, str):
                    if iid in seen:
                        out.append(
                            (
                                "agui/lifecycle/duplicate-interrupt-id",
                                f"two interrupts carrying the id {iid!r}: one resume answers both",
                                (iid,),
                                None,
                            )
                        )
                    seen.add(iid)
        self._finished = True
        return out

    def _run_error(self, ev: Mapping[str, Any]) -> list[Finding]:
        out: list[Finding] = []
        if self._finished:
            out.append(
                (
                    "agui/hygiene/run-error-after-finished",
                    "RUN_ERROR after RUN_FINISHED: the run was reported successful, then failed",
                    (),
                    None,
                )
            )
        self._finished = False
        return out

    # -- state ------------------------------------------------------------------------------------
    def _state_snapshot(self, ev: Mapping[str, Any]) -> list[Finding]:
        self._state.snapshot(ev.get("snapshot"))
        return []

    def _state_delta(self, ev: Mapping[str, Any]) -> list[Finding]:
        exc = self._state.delta(ev.get("delta"))
        if exc is None:
            return []
        if isinstance(exc, (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException)):
            message = (
                f"STATE_DELTA does not apply to the state the client holds ({exc}): it "
                "keeps the old state"
            )
        else:
            message = f"STATE_DELTA cannot be applied ({type(exc).__name__}: {exc})"
        return [("agui/hygiene/state-patch-failed", message, (), None)]

    # -- messages ---------------------------------------------------------------------------------
    def _note(self, messages: Any) -> None:
        for msg in messages if isinstance(messages, list) else []:
            if isinstance(msg, Mapping) and isinstance(msg.get("id"), str):
                self._known_ids.add(msg["id"])

    def _text_start(self, ev: Mapping[str, Any]) -> list[Finding]:
        mid = ev.get("messageId")
        if isinstance(mid, str):
            self._known_ids.add(mid)
            self._streamed.setdefault(mid, [])
        return []

    def _text_content(self, ev: Mapping[str, Any]) -> list[Finding]:
        parts = self._streamed.get(str(ev.get("messageId")))
        if parts is not None and isinstance(ev.get("delta"), str):
            parts.append(ev["delta"])
        return []

    def _text_end(self, ev: Mapping[str, Any]) -> list[Finding]:
        mid = str(ev.get("messageId"))
        parts = self._streamed.get(mid)
        if parts is not None:
            self._texts[mid] = self._texts.get(mid, "") + "".join(parts)
            parts.clear()
        return []

    def _messages_snapshot(self, ev: Mapping[str, Any]) -> list[Finding]:
        messages = ev.get("messages")
        if not isinstance(messages, list):
            return []
        out: list[Finding] = []
        ids = {m.get("id") for m in messages if isinstance(m, Mapping)}
        new_by_text: dict[str, str] = {}
        for m in messages:
            if not isinstance(m, Mapping):
                continue
            mid, content = m.get("id"), m.get("content")
            if isinstance(mid, str) and mid not in self._known_ids and isinstance(content, str):
                new_by_text.setdefault(content, mid)
        for mid, text in self._texts.items():
            if mid not in ids and text and text in new_by_text:
                out.append(
                    (
                        "agui/hygiene/snapshot-renames-message",
                        f"MESSAGES_SNAPSHOT drops streamed message {mid!r} and re-adds its text "
                        f"as {new_by_text[text]!r}",
                        (mid, new_by_text[text]),
                        None,
                    )
                )
        self._note(messages)
        return out


_HANDLERS: Final = {
    "RUN_STARTED": AguiExtraChecks._run_started,
    "RUN_FINISHED": AguiExtraChecks._run_finished,
    "RUN_ERROR": AguiExtraChecks._run_error,
    "STATE_SNAPSHOT": AguiExtraChecks._state_snapshot,
    "STATE_DELTA": AguiExtraChecks._state_delta,
    "TEXT_MESSAGE_START": AguiExtraChecks._text_start,
    "TEXT_MESSAGE_CONTENT": AguiExtraChecks._text_content,
    "TEXT_MESSAGE_END": AguiExtraChecks._text_end,
    "MESSAGES_SNAPSHOT": AguiExtraChecks._messages_snapshot,
}
