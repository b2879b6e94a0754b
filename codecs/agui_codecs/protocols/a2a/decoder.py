"""Decoder for an A2A agent's streaming reply (``message/stream``, JSON-RPC 2.0 over SSE).

Follows the Agent2Agent specification: v0.3 (section 7.2 ``message/stream``: each SSE ``data``
is a JSON-RPC response whose ``result`` is a ``Task``, ``Message``, ``TaskStatusUpdateEvent`` or
``TaskArtifactUpdateEvent``, told apart by ``kind``; ``final: true`` ends the stream) and v1.0
(``SendStreamingMessage``: ``result`` is a ``StreamResponse`` with one of ``task``,
``message``, ``statusUpdate``, ``artifactUpdate``; states are ``TASK_STATE_*``, roles
``ROLE_*``, parts ``{"text"} | {"data"} | {"url"} | {"raw"}``). Recordings are the official
``a2a-sdk`` server's (``tests/corpus/a2a``). Mapping to AG-UI:

* agent messages (a ``Message`` result, a status update's ``status.message``, the status of a
  ``Task`` snapshot): their text parts are one TEXT_MESSAGE each; their other parts CUSTOM
  ``data-a2a-part`` ``{id: messageId, data: <part>}``. User messages (a task's ``history``)
  are the client's own and not repeated.
* artifacts (``artifact-update``, a task's ``artifacts``): text parts are a TEXT_MESSAGE keyed
  by ``artifactId``, continued by ``append`` chunks and ended by ``lastChunk`` (the answer of
  most agents is an artifact); other parts (data, files) CUSTOM ``data-a2a-artifact``
  ``{id: artifactId, data: {artifactId, name?, description?, parts}}``, which the AI SDK
  encoder sends as that data part and AG-UI clients get as CUSTOM.
* states: ``completed`` → RUN_FINISHED ``stop``; ``input-required`` / ``auth-required`` →
  RUN_FINISHED with ``outcome: {type: "interrupt", interrupts: [{id: <taskId>, reason:
  "input_required" | "auth_required", message?}]}`` (finishReason ``other``), at ``final`` or
  at EOF (the SDK closes the stream without ``final`` there); the answer is the continuation:
  a ``resume`` entry for that interrupt id makes the request builder send the next message on
  the same ``taskId``; ``canceled`` → RUN_FINISHED ``outcome: {type: "cancelled"}``;
  ``failed`` / ``rejected`` → RUN_ERROR ``A2A_TASK_FAILED`` / ``A2A_TASK_REJECTED`` with the
  status message's text. ``submitted`` / ``working`` say nothing.
* a bare ``Message`` result with no task is the whole reply: RUN_FINISHED ``stop``.
* a JSON-RPC ``error`` → RUN_ERROR whose code is the error's name in the specification
  (``TaskNotFoundError`` for -32001 ...; :data:`JSONRPC_ERRORS`), else ``A2A_ERROR_<code>``.
* EOF while the task is still working → RUN_ERROR ``UPSTREAM_TRUNCATED``.

Unknown result kinds and unknown states are ignored (forward compatible).
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from ag_ui.core import Interrupt, RunFinishedCancelledOutcome, RunFinishedInterruptOutcome

from ...errors import MalformedUpstreamError
from ...framing import DONE, Frame
from ..base import StreamDecoder

__all__ = ["ARTIFACT_PART", "JSONRPC_ERRORS", "MESSAGE_PART", "A2ADecoder", "state_of"]

JSONRPC_ERRORS: Final[dict[int, str]] = {
    -32700: "JSONParseError",
    -32600: "InvalidRequestError",
    -32601: "MethodNotFoundError",
    -32602: "InvalidParamsError",
    -32603: "InternalError",
    -32001: "TaskNotFoundError",
    -32002: "TaskNotCancelableError",
    -32003: "PushNotificationNotSupportedError",
    -32004: "UnsupportedOperationError",
    -32005: "ContentTypeNotSupportedError",
    -32006: "InvalidAgentResponseError",
    -32007: "AuthenticatedExtendedCardNotConfiguredError",
}
"""JSON-RPC error codes of the A2A specification (section 8) -> RUN_ERROR code."""

ARTIFACT_PART: Final = "data-a2a-artifact"
"""CUSTOM name of an artifact's non-text parts."""

MESSAGE_PART: Final = "data-a2a-part"
"""CUSTOM name of an agent message's non-text part."""

_V1_KINDS: Final = {
    "task": "task",
    "message": "message",
    "statusUpdate": "status-update",
    "artifactUpdate": "artifact-update",
}
_INTERRUPTS: Final = {"input-required": "input_required", "auth-required": "auth_required"}


def state_of(status: Any) -> str:
    """A status's ``state`` in v0.3 spelling: ``TASK_STATE_INPUT_REQUIRED`` -> ``input-required``
    (``""`` when absent)."""
    state = status.get("state") if isinstance(status, dict) else None
    if not isinstance(state, str):
        return ""
    return state.lower().removeprefix("task_state_").replace("_", "-")


def _is_agent(message: dict[str, Any]) -> bool:
    role = message.get("role")
    return isinstance(role, str) and role.lower().removeprefix("role_") == "agent"


def _text_of(part: Any) -> str | None:
    if not isinstance(part, dict):
        return None
    text = part.get("text")
    if isinstance(text, str) and part.get("kind", "text") == "text":
        return text
    return None


class A2ADecoder(StreamDecoder):
    """An A2A ``message/stream`` reply (v0.3 or v1.0) -> AG-UI events (module docstring)."""

    name: ClassVar[str] = "a2a"
    provider: ClassVar[str] = "a2a"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._task_id: str | None = None
        self._interrupt: tuple[str, str | None] | None = None  # (reason, message)
        self._unnamed = 0  # agent messages without a messageId

    def handle(self, frame: Frame) -> None:
        if frame.data is DONE:
            return
        response = self.obj(frame.data, "A2A JSON-RPC response")
        if response.get("error") is not None:
            self._rpc_error(response["error"])
            return
        result = self.obj(response.get("result", response), "A2A JSON-RPC result")
        kind, value = self._kind(result)
        if kind == "task":
            self._task(value)
        elif kind == "message":
            self._message(value)
            if self._task_id is None and not self.run.ended:
                self.run.finish(finish_reason="stop")
        elif kind == "status-update":
            self._status_update(value)
        elif kind == "artifact-update":
            self._artifact_update(value)

    def _kind(self, result: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        kind = result.get("kind")
        if isinstance(kind, str):
            return kind, result
        for key, name in _V1_KINDS.items():
            if key in result:
                return name, self.obj(result[key], f"result.{key}")
        return "", result

    def _rpc_error(self, error: Any) -> None:
        error = self.obj(error, "JSON-RPC error")
        code = error.get("code")
        number = code if isinstance(code, int) and not isinstance(code, bool) else None
        name = JSONRPC_ERRORS.get(number, f"A2A_ERROR_{number}") if number is not None else None
        message = error.get("message")
        self.run.fail(
            name or "A2A_ERROR",
            message if isinstance(message, str) and message else "the agent reported an error",
        )

    # -- results --------------------------------------------------------------------------
    def _set_task(self, task_id: Any) -> None:
        if isinstance(task_id, str) and task_id:
            self._task_id = self._task_id or task_id
        self.run.start()

    def _task(self, task: dict[str, Any]) -> None:
        self._set_task(task.get("id"))
        for artifact in self.arr(task.get("artifacts"), "task.artifacts"):
            self._artifact(self.obj(artifact, "task artifact"), append=False, last=True)
        self._status(task.get("status"), final=False)

    def _status_update(self, update: dict[str, Any]) -> None:
        self._set_task(update.get("taskId"))
        self._status(update.get("status"), final=update.get("final") is True)

    def _artifact_update(self, update: dict[str, Any]) -> None:
        self._set_task(update.get("taskId"))
        artifact = self.obj(update.get("artifact"), "artifact-update.artifact")
        self._artifact(
            artifact, append=update.get("append") is True, last=update.get("lastChunk") is True
        )

    def _status(self, status: Any, *, final: bool) -> None:
        if status is None:
            return
        status = self.obj(status, "status")
        text = ""
        message = status.get("message")
        if message is not None:
            text = self._message(self.obj(message, "status.message"))
        state = state_of(status)
        if state == "completed":
            self.run.finish(finish_reason="stop", provider_finish_reason=state)
        elif state in ("failed", "rejected"):
            code = "A2A_TASK_FAILED" if state == "failed" else "A2A_TASK_REJECTED"
            self.run.fail(code, text or f"the agent's task was {state}")
        elif state == "canceled":
            self.run.finish(
                finish_reason="other",
                provider_finish_reason=state,
                outcome=RunFinishedCancelledOutcome(),
            )
        elif state in _INTERRUPTS:
            self._interrupt = (_INTERRUPTS[state], text or None)
            if final:
                self._finish_interrupt()
        elif state in ("submitted", "working"):
            self._interrupt = None  # the task runs again
            if final:
                self.run.finish(finish_reason="other", provider_finish_reason=state)
        elif final:
            self.run.finish(finish_reason="other", provider_finish_reason=state or None)

    def _message(self, message: dict[str, Any]) -> str:
        """Emit an agent message's parts; return its text (``""`` for a user message)."""
        self.run.start()
        if not _is_agent(message):
            return ""
        message_id = message.get("messageId")
        if not isinstance(message_id, str) or not message_id:
            self._unnamed += 1
            message_id = f"message-{self._unnamed}"
        key = ("message", message_id)
        texts: list[str] = []
        for part in self.arr(message.get("parts"), "message.parts"):
            text = _text_of(part)
            if text is None:
                self.run.custom(MESSAGE_PART, {"id": message_id, "data": part})
            elif text:
                texts.append(text)
                self.run.text(text, key=key)
        self.run.end_text(key)
        return "".join(texts)

    def _artifact(self, artifact: dict[str, Any], *, append: bool, last: bool) -> None:
        artifact_id = artifact.get("artifactId")
        if not isinstance(artifact_id, str) or not artifact_id:
            raise MalformedUpstreamError("artifact without its artifactId")
        key = ("artifact", artifact_id)
        if not append:
            self.run.end_text(key)  # a chunk that does not append replaces: a new message
        others = []
        for part in self.arr(artifact.get("parts"), "artifact.parts"):
            text = _text_of(part)
            if text is None:
                others.append(part)
            elif text:
                self.run.text(text, key=key)
        if others:
            data: dict[str, Any] = {"artifactId": artifact_id, "parts": others}
            for field in ("name", "description"):
                if isinstance(artifact.get(field), str):
                    data[field] = artifact[field]
            self.run.custom(ARTIFACT_PART, {"id": artifact_id, "data": data})
        if last:
            self.run.end_text(key)

    # -- end of run -----------------------------------------------------------------------
    def _finish_interrupt(self) -> None:
        assert self._interrupt is not None
        reason, message = self._interrupt
        interrupt = Interrupt(id=self._task_id or self.run.run_id or "a2a-task", reason=reason,
                              message=message)  # fmt: skip
        self.run.finish(
            finish_reason="other",
            provider_finish_reason=reason.replace("_", "-"),
            outcome=RunFinishedInterruptOutcome(interrupts=[interrupt]),
        )

    def finalize(self) -> None:
        if self._interrupt is not None:
            self._finish_interrupt()
        else:
            self.run.fail("UPSTREAM_TRUNCATED", "A2A stream ended before the task did")
