"""Decoder for a LangGraph Platform run stream (``POST /threads/{thread_id}/runs/stream``).

Follows the LangGraph Platform API (Agent Protocol ``runs/stream``; langgraph-sdk 0.4
``_shared/utilities._sse_to_v2_dict`` for the event names): SSE events named by stream mode,
``<mode>|<ns>|...`` when they come from a subgraph (``stream_subgraphs``, each ``ns`` entry
``<node>:<task id>``), ``metadata`` first (``run_id``), ``error`` on failure, ``end`` or EOF at
the end. Recordings: the LangGraph API server's (``tests/corpus/langgraph``). Mapping:

* ``messages`` (the ``messages-tuple`` mode; ``data = [message chunk, metadata]``): AI chunks'
  ``content`` (a string, or content blocks: ``text``, ``reasoning`` / ``thinking``) →
  TEXT_MESSAGE_* / REASONING_* keyed by the LangChain message ``id``; ``tool_call_chunks`` →
  TOOL_CALL_START/ARGS keyed by message id and ``index``; ``chunk_position: "last"`` ends the
  message's parts; a ``tool`` message → TOOL_CALL_RESULT of its ``tool_call_id`` (``isError``
  for ``status: "error"``); human / system messages are the client's own. ``usage_metadata``
  is summed into the run's usage.
* ``messages/partial`` / ``messages/complete`` (the ``messages`` mode: whole messages so far):
  the text that is new since the last one of that id; a tool call once its message is complete.
* subgraphs: a message or tool call streamed under a namespace carries ``metadata:
  {"subagent": <the subgraph's node>, "langgraphNamespace": [<ns>...]}`` on its START event
  (AG-UI 1.0 has no subagent events; their 1.1 draft is not what ``@ag-ui/client`` 1.0 reads).
* ``custom``: CUSTOM ``data-langgraph-custom`` ``{data: <value>, namespace: [...]}`` (an AI SDK
  ``data-langgraph-custom`` part).
* ``updates`` with ``__interrupt__`` (``interrupt()`` in a node): the run ends at EOF with
  RUN_FINISHED ``outcome: {type: "interrupt", interrupts: [{id, reason: "langgraph_interrupt",
  message?, responseSchema?, metadata: {value, namespace}}]}``; the client answers with a
  ``resume`` entry, which the request builder sends as the platform's ``command.resume``.
  Other ``updates`` (node outputs) repeat what ``messages`` streamed and are not replayed.
* ``error`` → RUN_ERROR with the error's class name as code (``ValueError``), else
  ``LANGGRAPH_ERROR``; ``end`` or EOF → RUN_FINISHED (``tool-calls`` when client tool calls
  wait for results, else ``stop``).

Other modes (``values``, ``events``, ``debug``, ...) are ignored.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, ClassVar, Final

from ag_ui.core import Interrupt, RunFinishedInterruptOutcome

from ... import jsontext
from ...errors import MalformedUpstreamError
from ...framing import DONE, Frame
from ..base import StreamDecoder

__all__ = ["CUSTOM_PART", "INTERRUPT_REASON", "LangGraphDecoder"]

CUSTOM_PART: Final = "data-langgraph-custom"
"""CUSTOM name of a ``custom`` stream event."""

INTERRUPT_REASON: Final = "langgraph_interrupt"
"""``reason`` of the AG-UI interrupt made from a LangGraph ``interrupt()``."""

_AI_TYPES: Final = frozenset({"AIMessageChunk", "ai", "AIMessage"})
_COUNTS: Final = ("input_tokens", "output_tokens", "total_tokens")


def _type_of(message: dict[str, Any]) -> str:
    """A LangChain message's ``type`` (``""`` when it is not a string)."""
    kind = message.get("type")
    return kind if isinstance(kind, str) else ""


class LangGraphDecoder(StreamDecoder):
    """A LangGraph Platform ``runs/stream`` body -> AG-UI events (module docstring)."""

    name: ClassVar[str] = "langgraph"
    provider: ClassVar[str] = "langgraph"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._interrupts: list[Interrupt] = []
        self._calls: dict[str, Hashable] = {}  # tool call id -> builder key
        self._seen: dict[str, str] = {}  # messages mode: message id -> text sent so far
        self._done_calls: set[str] = set()
        self._usage: dict[str, int] = {}

    # -- payloads -------------------------------------------------------------------------
    def handle(self, frame: Frame) -> None:
        if frame.data is DONE:
            return
        event, data = frame.event or "message", frame.data
        if event == "message" and isinstance(data, dict) and isinstance(data.get("event"), str):
            event, data = data["event"], data.get("data")  # a dump of SDK StreamParts
        mode, _, rest = event.partition("|")
        namespace = rest.split("|") if rest else []
        if mode == "metadata":
            self.run.start()
        elif mode == "messages":
            pair = self.arr(data, "messages event")
            if len(pair) != 2:
                raise MalformedUpstreamError("a messages event is [message chunk, metadata]")
            self._chunk(self.obj(pair[0], "message chunk"), namespace)
        elif mode in ("messages/partial", "messages/complete"):
            for message in self.arr(data, f"{mode} event"):
                self._whole(self.obj(message, "message"), namespace, mode.endswith("complete"))
        elif mode == "updates":
            self._updates(self.obj(data, "updates event"), namespace)
        elif mode == "custom":
            self.run.custom(CUSTOM_PART, {"data": data, "namespace": namespace})
        elif mode == "error":
            self._error(data)
        elif mode == "end":
            self._finish()
        else:
            self.run.start()

    @staticmethod
    def _attribution(namespace: list[str]) -> dict[str, Any] | None:
        if not namespace:
            return None
        return {"subagent": namespace[-1].split(":", 1)[0], "langgraphNamespace": namespace}

    def _chunk(self, chunk: dict[str, Any], namespace: list[str]) -> None:
        self.run.start()
        kind = _type_of(chunk)
        if kind == "tool":
            self._tool_message(chunk)
            return
        if kind not in _AI_TYPES:
            return  # the client's own human / system messages
        message_id = chunk.get("id")
        if not isinstance(message_id, str) or not message_id:
            raise MalformedUpstreamError("an AI message chunk without its id")
        meta = self._attribution(namespace)
        self._content(message_id, chunk.get("content"), meta)
        for tool in self.arr(chunk.get("tool_call_chunks"), "tool_call_chunks"):
            self._tool_chunk(message_id, self.obj(tool, "tool call chunk"), meta)
        self._count(chunk.get("usage_metadata"))
        if chunk.get("chunk_position") == "last":
            self._end_message(message_id)

    def _content(self, message_id: str, content: Any, meta: dict[str, Any] | None) -> None:
        if isinstance(content, str):
            if content:
                self.run.end_reasoning(("reasoning", message_id))
                self.run.text(content, key=("text", message_id), metadata=meta)
            return
        for block in self.arr(content, "message content"):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
                self.run.end_reasoning(("reasoning", message_id))
                self.run.text(block["text"], key=("text", message_id), metadata=meta)
            elif kind in ("reasoning", "thinking"):
                text = block.get("reasoning", block.get("thinking"))
                if isinstance(text, str) and text:
                    self.run.reasoning(text, key=("reasoning", message_id))

    def _tool_chunk(
        self, message_id: str, tool: dict[str, Any], meta: dict[str, Any] | None
    ) -> None:
        index = tool.get("index", 0)
        key = ("tool", message_id, index if isinstance(index, int | str) else 0)
        if not self.run.tool_is_open(key):
            name, call_id = tool.get("name"), tool.get("id")
            if not isinstance(name, str) or not name:
                raise MalformedUpstreamError("a tool call chunk opens a call without its name")
            call_id = call_id if isinstance(call_id, str) and call_id else None
            opened = self.run.tool_start(key, name, call_id, metadata=meta)
            self._calls[call_id or opened] = key  # by the provider's id: tool messages name it
        args = tool.get("args")
        if isinstance(args, str):
            self.run.tool_args(key, args)

    def _end_message(self, message_id: str) -> None:
        self.run.end_text(("text", message_id))
        self.run.end_reasoning(("reasoning", message_id))
        for call_id, key in list(self._calls.items()):
            if isinstance(key, tuple) and key[1] == message_id:
                self._end_call(call_id)

    def _end_call(self, call_id: str) -> None:
        key = self._calls.pop(call_id, None)
        if key is not None and self.run.tool_is_open(key):
            if not self.run.tool_has_args(key):
                self.run.tool_args(key, "{}")
            self.run.end_tool(key)

    def _tool_message(self, message: dict[str, Any]) -> None:
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise MalformedUpstreamError("a tool message without its tool_call_id")
        self._end_call(call_id)
        content = message.get("content")
        text = content if isinstance(content, str) else jsontext.dumps(content)
        meta = {"isError": True} if message.get("status") == "error" else None
        self.run.tool_result(call_id, text, metadata=meta)

    def _whole(self, message: dict[str, Any], namespace: list[str], complete: bool) -> None:
        """A ``messages/partial`` / ``messages/complete`` message: send what is new."""
        self.run.start()
        if _type_of(message) == "tool":
            self._tool_message(message)
            return
        if _type_of(message) not in _AI_TYPES:
            return
        message_id = message.get("id")
        if not isinstance(message_id, str) or not message_id:
            raise MalformedUpstreamError("an AI message without its id")
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        sent = self._seen.get(message_id, "")
        meta = self._attribution(namespace)
        if text.startswith(sent) and len(text) > len(sent):
            self.run.text(text[len(sent) :], key=("text", message_id), metadata=meta)
            self._seen[message_id] = text
        if not complete:
            return
        for n, call in enumerate(self.arr(message.get("tool_calls"), "tool_calls")):
            call = self.obj(call, "tool call")
            call_id, name = call.get("id"), call.get("name")
            call_id = call_id if isinstance(call_id, str) and call_id else None
            if not isinstance(name, str) or not name or call_id in self._done_calls:
                continue
            key = ("tool", message_id, n)
            opened = self.run.tool_start(key, name, call_id, metadata=meta)
            self._done_calls.add(call_id or opened)  # provider id (AG-UI id may be derived)
            self.run.tool_args(key, jsontext.dumps(call.get("args") or {}))
            self.run.end_tool(key)
        self._count(message.get("usage_metadata"))
        self._end_message(message_id)

    def _updates(self, update: dict[str, Any], namespace: list[str]) -> None:
        self.run.start()
        for item in self.arr(update.get("__interrupt__"), "__interrupt__"):
            item = self.obj(item, "interrupt")
            value = item.get("value")
            interrupt_id = item.get("id")
            if not isinstance(interrupt_id, str) or not interrupt_id:
                interrupt_id = f"{self.run.run_id}-interrupt-{len(self._interrupts) + 1}"
            message = value if isinstance(value, str) else None
            if isinstance(value, dict):
                for field in ("question", "message", "description"):
                    if isinstance(value.get(field), str):
                        message = value[field]
                        break
            schema = item.get("response_schema")
            self._interrupts.append(
                Interrupt(
                    id=interrupt_id,
                    reason=INTERRUPT_REASON,
                    message=message,
                    response_schema=schema if isinstance(schema, dict) else None,
                    metadata={"value": value, "namespace": namespace},
                )
            )

    def _count(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for name in _COUNTS:
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                self._usage[name] = self._usage.get(name, 0) + value

    def _error(self, data: Any) -> None:
        error = data if isinstance(data, dict) else {"message": data}
        code, message = error.get("error"), error.get("message")
        self.run.fail(
            code if isinstance(code, str) and code else "LANGGRAPH_ERROR",
            message if isinstance(message, str) and message else "the graph run failed",
        )

    # -- end of run -----------------------------------------------------------------------
    def _finish(self) -> None:
        usage = self.run.usage(**self._usage) if self._usage else None
        if self._interrupts:
            self.run.finish(
                finish_reason="other",
                usage=usage,
                outcome=RunFinishedInterruptOutcome(interrupts=list(self._interrupts)),
            )
            return
        pending = bool(self.run.pending_tool_call_ids)
        self.run.finish(finish_reason="tool-calls" if pending else "stop", usage=usage)

    def finalize(self) -> None:
        self._finish()  # EOF is how the platform ends a run's stream
