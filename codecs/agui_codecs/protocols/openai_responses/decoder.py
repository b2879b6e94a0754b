"""Decoder for OpenAI Responses streams (``POST /v1/responses`` with ``stream: true``).

Follows the Responses streaming events reference (platform.openai.com "Streaming events",
2025-2026: ``response.*`` events, each with a ``type`` and a ``sequence_number``). Where the
reference is silent, the behaviour of ``@ai-sdk/openai`` (vercel/ai
``packages/openai/src/responses/openai-responses-language-model.ts``,
``map-openai-responses-finish-reason.ts``, ``map-openai-responses-annotation.ts``,
``convert-openai-responses-usage.ts``, commit ed857f5) is followed. The payload's JSON
``type`` decides (JSONL dumps have no SSE ``event:`` name). Output items are keyed by
``output_index``, which stays stable while some compatible proxies rotate ``item_id`` on every
event (GitHub Copilot); an event without ``output_index`` joins the item its ``item_id`` was
last seen with, else is keyed by that id, and an item keyed by its id keeps that key when its
later events bring an ``output_index`` (an ``output_item.added`` without one, then its
``.done`` with one, is one item: one TOOL_CALL_START, one TOOL_CALL_END).

Output items → AG-UI (through :class:`~agui_codecs.builder.RunBuilder`):

* ``message``: ``output_text`` deltas become one TEXT_MESSAGE_* per item (``metadata.phase``
  when the item has one: ``commentary`` / ``final_answer``). A part whose text arrives only in
  ``output_text.done`` / ``content_part.done`` / ``output_item.done`` is sent once from there.
  ``refusal`` parts become a separate text message flagged ``metadata.refusal`` and end the run
  with ``finishReason: content-filter`` and ``metadata.refusal`` (the refusal text).
  Annotations (``url_citation``, ``file_citation``, ``container_file_citation``,
  ``file_path``) become CUSTOM ``source`` events, once per ``(sourceType, sourceId)`` per run.
* ``reasoning``: summary parts (``reasoning_summary_text.*``) and raw chain of thought
  (``reasoning_text.*``, compatible hosts) become one REASONING message per item, parts
  separated by a blank line; the item's final ``encrypted_content`` (from
  ``output_item.done``, else ``.added``) becomes REASONING_ENCRYPTED_VALUE with
  ``metadata.field: "encryptedContent"`` on that message.
* ``function_call``: TOOL_CALL_START/ARGS/END whose id is the item's ``call_id`` everywhere
  (argument events carry only ``item_id`` / ``output_index`` and are mapped to it). Arguments
  that come only in ``function_call_arguments.done`` or ``output_item.done`` are sent as one
  ARGS; a call with no argument text gets ARGS ``"{}"``.
* ``custom_tool_call`` (free-form input): a client tool call whose arguments are the input as
  a **JSON string** (``"SELECT ..."``), streamed as escaped fragments between quotes, so the
  ARGS always parse as JSON (as ``@ai-sdk/openai``'s ``JSON.stringify(item.input)``).
* hosted tools (``web_search_call``, ``file_search_call``, ``code_interpreter_call``,
  ``image_generation_call``, ``mcp_call``, ``mcp_list_tools``): provider-executed tool calls
  (TOOL_CALL_START ``metadata.providerExecuted``) with the item ``id`` as tool call id, opened
  at ``output_item.added``; their arguments are the input fields of :data:`HOSTED_TOOLS`
  (``code_interpreter_call_code.*`` and ``mcp_call_arguments.*`` stream), and
  ``output_item.done`` gives TOOL_CALL_RESULT whose content is the done item as JSON
  (``metadata.isError`` when the item has an ``error`` or ``status: failed``). An ``mcp_call``
  that follows an approval takes the ``approval_request_id`` as its id.
  ``image_generation_call.partial_image`` becomes CUSTOM ``tool-output-preliminary``
  ``{toolCallId, output: {result: <base64>, partial_image_index, size?...}, preliminary: true}``
  (the project's convention for preliminary tool output).
* ``mcp_approval_request``: a provider-executed tool call ``mcp.<name>`` (id = the request id)
  and an AG-UI 1.0 interrupt ``{id: <request id>, reason: "tool_approval", toolCallId}`` (the
  id to answer with an ``mcp_approval_response``) whose ``metadata`` keeps the item's
  ``itemId``, ``name``, ``serverLabel`` and ``arguments`` (the JSON text as sent), from which the
  request builder rebuilds the item for a stateless continuation; the run ends with
  RUN_FINISHED ``outcome: interrupt``.
* any other ``*_call`` item with a ``call_id`` (``computer_call``, ``shell_call``...) is a client
  tool call named after its type, arguments = the item without ``id``/``type``/``status``/
  ``call_id``; any other item becomes CUSTOM :data:`OUTPUT_ITEM_EVENT` so nothing is lost.

The tool-call items (client calls, hosted tools, MCP approvals) are handled by
:class:`~agui_codecs.protocols.openai_responses._tools.ToolCalls`, which this decoder extends;
the other items, the item keys and the end of a response are handled here.

End of a response: ``response.completed`` → RUN_FINISHED (``finishReason`` ``tool-calls``
when a client tool was called or an approval is pending, else ``stop``; ``content-filter``
after a refusal; ``providerFinishReason`` = the response ``status``; ``metadata.responseId``);
``response.incomplete`` → RUN_FINISHED with ``length`` (``max_output_tokens``),
``content-filter`` or ``other`` from ``incomplete_details.reason``; ``response.failed`` and
``error`` → RUN_ERROR whose ``code`` is the upstream's (``insufficient_quota``). EOF before any
of them → RUN_ERROR ``UPSTREAM_TRUNCATED``.

Usage from the final response: ``inputTokens`` = ``input_tokens`` (cached included),
``cachedInputTokens`` = ``input_tokens_details.cached_tokens``, ``outputTokens`` =
``output_tokens`` (reasoning included), ``reasoningTokens`` =
``output_tokens_details.reasoning_tokens`` (a part, never added again), ``totalTokens`` =
``total_tokens``. OpenRouter's ``usage.cost`` is passed on as the provider cost (complete unless
``is_byok`` without ``cost_details.upstream_inference_cost``).

Several responses in one body (an agent loop recorded back to back) become several AG-UI runs in
sequence (:attr:`~agui_codecs.protocols.base.StreamDecoder.multi_run`): a ``response.created`` /
``queued`` / ``in_progress`` for a new response id begins the next run (run id suffixed ``-2``,
``-3``...).
A resumed stream (``GET /v1/responses/{id}?stream=true&starting_after=N``) may begin with any
event: the run starts at the first one. Events whose ``sequence_number`` is not above the last
one of the same response are dropped as replays, so a resumed tail appended to the decoder that
saw the head does not repeat deltas.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ClassVar, Final

from ag_ui.core import Interrupt, RunFinishedInterruptOutcome, TokenUsage

from ...endings import OPENAI_INCOMPLETE_REASONS, canonical_finish
from ...errors import MalformedUpstreamError
from ...framing import DONE, Frame
from ..base import upstream_error
from ._tools import HOSTED_TOOLS, PRELIMINARY_OUTPUT_EVENT, ItemState, ToolCalls, to_json

__all__ = [
    "HOSTED_TOOLS",
    "INCOMPLETE_REASONS",
    "OUTPUT_ITEM_EVENT",
    "PRELIMINARY_OUTPUT_EVENT",
    "OpenAIResponsesDecoder",
]

INCOMPLETE_REASONS: Final = OPENAI_INCOMPLETE_REASONS
"""``incomplete_details.reason`` → canonical finish reason (:mod:`agui_codecs.endings`);
anything else maps to ``other``."""

OUTPUT_ITEM_EVENT: Final = "openai.output_item"
"""CUSTOM event carrying ``{"outputIndex"?, "item"}`` for an output item type not translated."""

_STARTERS: Final = frozenset({"response.created", "response.queued", "response.in_progress"})
_SUMMARY, _CONTENT = "summary", "content"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class OpenAIResponsesDecoder(ToolCalls):
    """OpenAI Responses event stream → AG-UI runs (see the module docstring).

    Accepts the options of :class:`~agui_codecs.protocols.base.StreamDecoder`. Malformed input
    (bad JSON, an event that is not an object or has no ``type``, an item event with neither
    ``output_index`` nor ``item_id``, a ``function_call`` without ``call_id`` or ``name``) ends
    the run with RUN_ERROR ``UPSTREAM_MALFORMED``.
    """

    name: ClassVar[str] = "openai-responses"
    provider: ClassVar[str] = "openai"
    multi_run: ClassVar[bool] = True

    _HANDLERS: ClassVar[dict[str, Callable[[OpenAIResponsesDecoder, dict[str, Any]], None]]]
    _DELTAS: ClassVar[dict[str, Callable[[OpenAIResponsesDecoder, dict[str, Any]], None]]]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._reset()

    def _reset(self) -> None:
        """Forget the per-response state (a new response begins)."""
        self._items: dict[Hashable, ItemState] = {}
        self._indexes: dict[str, int] = {}  # item id -> output_index, for events lacking one
        self._keyed_by_id: dict[int, str] = {}  # output_index -> the item id it was keyed by
        self._response_id: str | None = None
        self._last_seq: int | None = None
        self._client_calls = False
        self._refusal: list[str] = []
        self._interrupts: list[Interrupt] = []
        self._sources: set[tuple[str, str]] = set()

    # -- dispatch -----------------------------------------------------------------------
    def begins_next_run(self, frame: Frame) -> bool:
        """A new response after the previous one ended begins the next AG-UI run."""
        data = frame.data
        if not (isinstance(data, dict) and isinstance(data.get("type"), str)):
            return False
        if data["type"] not in _STARTERS:
            return False
        response = data.get("response")
        if isinstance(response, dict) and response.get("id") == self._response_id:
            return False
        self.run.next_run()
        self._reset()
        return True

    fast_deltas: ClassVar[bool] = True
    """Take a started run's ``*.delta`` events by :meth:`_delta_only` (the same events)."""

    def handle(self, frame: Frame) -> None:
        if self.fast_deltas and self._delta_only(frame.data):
            return
        if frame.data is DONE:  # OpenRouter ends the body with [DONE]
            if self.run.started:
                self.finalize()
            return
        payload = self.obj(frame.data, "Responses stream event")
        etype = payload.get("type")
        if etype is None and frame.event not in (None, "message"):
            etype = frame.event  # the SSE event name stands in for a missing JSON type
        if not isinstance(etype, str) or not etype:
            raise MalformedUpstreamError("Responses stream event without a type")
        if payload.get("type") != etype:
            payload = {**payload, "type": etype}  # handlers read the type from the payload
        response = payload.get("response")
        response = response if isinstance(response, dict) else None
        rid = response.get("id") if response else None
        if etype == "response.created" and rid and self._response_id and rid != self._response_id:
            # A new response while the previous one is still open: that one was cut short.
            self.run.fail("UPSTREAM_TRUNCATED", f"response {self._response_id} ended early")
            self.run.next_run()
            self._reset()
        seq = payload.get("sequence_number")
        if isinstance(seq, int) and not isinstance(seq, bool):
            if self._last_seq is not None and seq <= self._last_seq:
                return  # replayed by a resumed stream
            self._last_seq = seq
        if isinstance(rid, str) and rid:
            self._response_id = self._response_id or rid
        model = response.get("model") if response else None
        self.run.start(
            upstream_id=self._response_id, model=model if isinstance(model, str) else None
        )
        handler = self._HANDLERS.get(etype)
        if handler is not None:
            handler(self, payload)
        # Unknown event types (and the status-only ``*.in_progress`` / ``*.searching`` ...
        # events) are ignored, as the API's versioning policy asks of clients.

    def _delta_only(self, payload: Any) -> bool:
        """The fast path of :meth:`handle`: a ``*.delta`` event (text, refusal, reasoning,
        arguments) of a started run, without a ``response`` object, whose
        ``sequence_number`` is absent or a new integer. For it the steps of :meth:`handle`
        come down to its handler (no response id or model to read; ``start`` changes nothing
        once the run has started). Returns False, having done nothing, for any other payload.
        ``tests/codecs/test_openai_responses_fast_path.py`` checks both ways give the same
        events (hypothesis)."""
        if type(payload) is not dict or not self.run.started or "response" in payload:
            return False
        etype = payload.get("type")
        handler = self._DELTAS.get(etype) if type(etype) is str else None
        if handler is None:
            return False
        seq = payload.get("sequence_number")
        if seq is not None:
            if type(seq) is not int or (self._last_seq is not None and seq <= self._last_seq):
                return False
            self._last_seq = seq
        handler(self, payload)
        return True

    def finalize(self) -> None:
        self.run.fail("UPSTREAM_TRUNCATED", "stream ended before response.completed")

    def _key(self, payload: dict[str, Any]) -> Hashable:
        """The item's ``output_index``; else its id (or the index that id was last seen at)."""
        index = payload.get("output_index")
        item = payload.get("item")
        item_id = payload.get("item_id") or (item.get("id") if isinstance(item, dict) else None)
        if not isinstance(item_id, str) or not item_id:
            item_id = None
        if isinstance(index, int) and not isinstance(index, bool):
            if item_id is not None:
                if item_id not in self._indexes and item_id in self._items:
                    # first seen without output_index (keyed by its id): it keeps that key,
                    # so its later events do not open the same item a second time
                    self._keyed_by_id.setdefault(index, item_id)
                self._indexes[item_id] = index
            return self._keyed_by_id.get(index, index)
        if item_id is not None:
            known = self._indexes.get(item_id)
            return item_id if known is None else self._keyed_by_id.get(known, known)
        raise MalformedUpstreamError(f"{payload.get('type')} has no output_index or item_id")

    def _state(self, key: Hashable) -> ItemState:
        state = self._items.get(key)
        if state is None:
            state = self._items[key] = ItemState()
        return state

    def _item(self, payload: dict[str, Any]) -> tuple[Hashable, ItemState, dict[str, Any], str]:
        item = self.obj(payload.get("item"), f"{payload.get('type')} item")
        itype = item.get("type")
        if not isinstance(itype, str):
            raise MalformedUpstreamError("output item without a type")
        key = self._key(payload)
        return key, self._state(key), item, itype

    # -- output items -------------------------------------------------------------------
    def _on_item_added(self, payload: dict[str, Any]) -> None:
        key, state, item, itype = self._item(payload)
        if itype == "message":
            phase = item.get("phase")
            state.phase = phase if isinstance(phase, str) else None
        elif itype == "reasoning":
            encrypted = item.get("encrypted_content")
            state.encrypted = encrypted if isinstance(encrypted, str) else None
        elif itype in ("function_call", "custom_tool_call"):
            self._client_call(key, state, item, itype)
        elif itype in HOSTED_TOOLS:
            self._hosted_start(key, state, item, itype)
        # mcp_approval_request and other items are translated whole at output_item.done.

    def _on_item_done(self, payload: dict[str, Any]) -> None:
        key, state, item, itype = self._item(payload)
        if itype == "message":
            for index, part in enumerate(self.arr(item.get("content"), "message item content")):
                self._part_done(key, index, part)
            self.run.end_text(("text", key))
            self.run.end_text(("refusal", key))
        elif itype == "reasoning":
            self._reasoning_done(key, state, item)
        elif itype in ("function_call", "custom_tool_call"):
            self._client_call(key, state, item, itype)
            field = "arguments" if itype == "function_call" else "input"
            self._args_done(key, item.get(field))
            self._end_tool(key)
        elif itype in HOSTED_TOOLS:
            self._hosted_done(key, state, item, itype)
        elif itype == "mcp_approval_request":
            self._approval(key, state, item)
        elif itype.endswith("_call") and isinstance(item.get("call_id"), str):
            drop = ("id", "type", "status", "call_id")
            self._client_call(key, state, item, itype, name=itype.removesuffix("_call"))
            self._args_done(key, to_json({k: v for k, v in item.items() if k not in drop}))
            self._end_tool(key)
        else:
            value: dict[str, Any] = {"item": item}
            if isinstance(key, int):
                value = {"outputIndex": key, **value}
            self.run.custom(OUTPUT_ITEM_EVENT, value)
        self._items.pop(key, None)

    # -- text ---------------------------------------------------------------------------
    def _text(self, key: Hashable, part: tuple[str, int], delta: Any, refusal: bool) -> None:
        if not isinstance(delta, str) or not delta:
            return
        state = self._state(key)
        state.parts.add(part)
        if refusal:
            self._refusal.append(delta)
            self.run.text(delta, key=("refusal", key), metadata={"refusal": True})
        else:
            meta = {"phase": state.phase} if state.phase else None
            self.run.text(delta, key=("text", key), metadata=meta)

    def _text_done(self, key: Hashable, part: tuple[str, int], text: Any, refusal: bool) -> None:
        if part not in self._state(key).parts:
            self._text(key, part, text, refusal)

    def _part_done(self, key: Hashable, index: int, part: Any) -> None:
        if not isinstance(part, dict):
            return
        ptype = part.get("type")
        if ptype == "refusal":
            self._text_done(key, ("refusal", index), part.get("refusal"), True)
        elif ptype == "output_text":
            self._text_done(key, ("text", index), part.get("text"), False)
            for annotation in self.arr(part.get("annotations"), "output_text annotations"):
                self._cite(annotation)
        elif ptype == "reasoning_text":
            self._reasoning_done_part(key, (_CONTENT, index), part.get("text"))

    def _on_text(self, p: dict[str, Any]) -> None:
        """``output_text.delta|done`` and ``refusal.delta|done``."""
        refusal = p["type"].startswith("response.refusal.")
        part = ("refusal" if refusal else "text", self._index(p))
        if p["type"].endswith(".delta"):
            self._text(self._key(p), part, p.get("delta"), refusal)
        else:
            self._text_done(self._key(p), part, p.get("refusal" if refusal else "text"), refusal)

    def _on_part_done(self, p: dict[str, Any]) -> None:
        self._part_done(self._key(p), self._index(p), p.get("part"))

    def _on_annotation(self, p: dict[str, Any]) -> None:
        self._cite(p.get("annotation"))

    @staticmethod
    def _index(payload: dict[str, Any], field: str = "content_index") -> int:
        index = payload.get(field, 0)
        return index if isinstance(index, int) and not isinstance(index, bool) else 0

    def _cite(self, annotation: Any) -> None:
        if not isinstance(annotation, dict):
            return
        atype = annotation.get("type")
        if atype == "url_citation" and isinstance(annotation.get("url"), str):
            url = annotation["url"]
            source: dict[str, Any] = {"sourceType": "url", "sourceId": url, "url": url}
            if isinstance(annotation.get("title"), str) and annotation["title"]:
                source["title"] = annotation["title"]
        elif atype in ("file_citation", "container_file_citation", "file_path"):
            file_id = annotation.get("file_id")
            if not isinstance(file_id, str) or not file_id:
                return
            filename = annotation.get("filename")
            name = filename if isinstance(filename, str) and filename else file_id
            source = {
                "sourceType": "document",
                "sourceId": file_id,
                "title": name,
                "filename": name,
                "mediaType": "application/octet-stream" if atype == "file_path" else "text/plain",
                "fileId": file_id,
            }
            if isinstance(annotation.get("container_id"), str):
                source["containerId"] = annotation["container_id"]
        else:
            return
        ident = (source["sourceType"], source["sourceId"])
        if ident not in self._sources:
            self._sources.add(ident)
            self.run.source(source)

    # -- reasoning ----------------------------------------------------------------------
    def _reasoning(self, key: Hashable, part: tuple[str, int], delta: Any) -> None:
        if not isinstance(delta, str) or not delta:
            return
        state = self._state(key)
        if state.last_part is not None and state.last_part != part:
            self.run.reasoning("\n\n", key=key)  # a new summary part: a new paragraph
        state.last_part = part
        state.parts.add(part)
        self.run.reasoning(delta, key=key)

    def _reasoning_done_part(self, key: Hashable, part: tuple[str, int], text: Any) -> None:
        if part not in self._state(key).parts:
            self._reasoning(key, part, text)

    def _reasoning_done(self, key: Hashable, state: ItemState, item: dict[str, Any]) -> None:
        for kind, field in ((_SUMMARY, "summary"), (_CONTENT, "content")):
            for index, part in enumerate(self.arr(item.get(field), f"reasoning item {field}")):
                if isinstance(part, dict):
                    self._reasoning_done_part(key, (kind, index), part.get("text"))
        encrypted = item.get("encrypted_content")
        encrypted = encrypted if isinstance(encrypted, str) and encrypted else state.encrypted
        if encrypted:
            self.run.reasoning_encrypted(encrypted, key=key, field="encryptedContent")
        self.run.end_reasoning(key)

    def _on_reasoning(self, p: dict[str, Any]) -> None:
        """``reasoning_summary_text.*``, ``reasoning_summary_part.done``, ``reasoning_text.*``."""
        if p["type"].startswith("response.reasoning_summary_"):
            part = (_SUMMARY, self._index(p, "summary_index"))
        else:
            part = (_CONTENT, self._index(p))
        if p["type"].endswith(".delta"):
            self._reasoning(self._key(p), part, p.get("delta"))
            return
        holder = p.get("part")
        text = holder.get("text") if isinstance(holder, dict) else p.get("text")
        self._reasoning_done_part(self._key(p), part, text)

    # -- end of a response --------------------------------------------------------------
    def _usage(self, response: dict[str, Any]) -> tuple[TokenUsage | None, float | None, bool]:
        """``(usage, provider cost, cost complete)`` from a final response object."""
        u = response.get("usage")
        if not isinstance(u, dict):
            return None, None, False
        inputs = u.get("input_tokens_details")
        outputs = u.get("output_tokens_details")
        usage = self.run.usage(
            input_tokens=u.get("input_tokens"),
            output_tokens=u.get("output_tokens"),
            total_tokens=u.get("total_tokens"),
            cached_input_tokens=inputs.get("cached_tokens") if isinstance(inputs, dict) else None,
            reasoning_tokens=outputs.get("reasoning_tokens") if isinstance(outputs, dict) else None,
        )
        cost = _number(u.get("cost"))  # OpenRouter
        complete = cost is not None and not u.get("is_byok")
        if cost is not None and not complete:
            details = u.get("cost_details")
            upstream = (
                _number(details.get("upstream_inference_cost"))
                if isinstance(details, dict)
                else None
            )
            if upstream is not None:
                cost, complete = cost + upstream, True
        return usage, cost, complete

    def _response(self, payload: dict[str, Any]) -> dict[str, Any]:
        response = payload.get("response")
        return response if isinstance(response, dict) else {}

    def _on_finished(self, payload: dict[str, Any]) -> None:
        response = self._response(payload)
        usage, cost, complete = self._usage(response)
        status = response.get("status")
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        if payload["type"] == "response.incomplete":
            finish = canonical_finish(INCOMPLETE_REASONS, reason)
            provider_reason = reason if isinstance(reason, str) else "incomplete"
        else:
            finish = "tool-calls" if self._client_calls or self._interrupts else "stop"
            provider_reason = status if isinstance(status, str) else "completed"
        metadata: dict[str, Any] = {}
        if self._response_id:
            metadata["responseId"] = self._response_id
        if self._refusal:
            finish = "content-filter"
            metadata["refusal"] = "".join(self._refusal)
        self.run.finish(
            finish_reason=finish,
            provider_finish_reason=provider_reason,
            usage=usage,
            metadata=metadata,
            outcome=(
                RunFinishedInterruptOutcome(interrupts=self._interrupts)
                if self._interrupts
                else None
            ),
            provider_cost=cost,
            provider_cost_complete=complete,
        )

    def _on_failed(self, payload: dict[str, Any]) -> None:
        response = self._response(payload)
        usage, cost, complete = self._usage(response)
        code, message = upstream_error(response.get("error"), "RESPONSE_FAILED")
        self.run.fail(
            code, message, usage=usage, provider_cost=cost, provider_cost_complete=complete
        )

    def _on_error(self, payload: dict[str, Any]) -> None:
        error = payload.get("error")
        if not isinstance(error, dict):  # the documented shape: code/message at top level
            error = {k: payload[k] for k in ("code", "message") if payload.get(k) is not None}
        code, message = upstream_error(error)
        self.run.fail(code, message)


OpenAIResponsesDecoder._HANDLERS = {
    "response.output_item.added": OpenAIResponsesDecoder._on_item_added,
    "response.output_item.done": OpenAIResponsesDecoder._on_item_done,
    "response.content_part.done": OpenAIResponsesDecoder._on_part_done,
    "response.output_text.delta": OpenAIResponsesDecoder._on_text,
    "response.output_text.done": OpenAIResponsesDecoder._on_text,
    "response.output_text.annotation.added": OpenAIResponsesDecoder._on_annotation,
    "response.refusal.delta": OpenAIResponsesDecoder._on_text,
    "response.refusal.done": OpenAIResponsesDecoder._on_text,
    "response.reasoning_summary_text.delta": OpenAIResponsesDecoder._on_reasoning,
    "response.reasoning_summary_text.done": OpenAIResponsesDecoder._on_reasoning,
    "response.reasoning_summary_part.done": OpenAIResponsesDecoder._on_reasoning,
    "response.reasoning_text.delta": OpenAIResponsesDecoder._on_reasoning,
    "response.reasoning_text.done": OpenAIResponsesDecoder._on_reasoning,
    "response.function_call_arguments.delta": OpenAIResponsesDecoder._on_args_delta,
    "response.function_call_arguments.done": OpenAIResponsesDecoder._on_args_done,
    "response.custom_tool_call_input.delta": OpenAIResponsesDecoder._on_args_delta,
    "response.custom_tool_call_input.done": OpenAIResponsesDecoder._on_args_done,
    "response.mcp_call_arguments.delta": OpenAIResponsesDecoder._on_args_delta,
    "response.mcp_call_arguments.done": OpenAIResponsesDecoder._on_args_done,
    "response.code_interpreter_call_code.delta": OpenAIResponsesDecoder._on_args_delta,
    "response.code_interpreter_call_code.done": OpenAIResponsesDecoder._on_code_done,
    "response.image_generation_call.partial_image": OpenAIResponsesDecoder._on_partial_image,
    "response.completed": OpenAIResponsesDecoder._on_finished,
    "response.incomplete": OpenAIResponsesDecoder._on_finished,
    "response.failed": OpenAIResponsesDecoder._on_failed,
    "error": OpenAIResponsesDecoder._on_error,
}
OpenAIResponsesDecoder._DELTAS = {
    etype: handler
    for etype, handler in OpenAIResponsesDecoder._HANDLERS.items()
    if etype.endswith(".delta")
}
