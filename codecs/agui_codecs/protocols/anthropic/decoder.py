"""Decoder for Anthropic Messages streams (``POST /v1/messages`` with ``stream: true``).

Follows the Messages streaming reference (platform.claude.com "Streaming Messages", API version
``2023-06-01``): ``message_start``, then per content block ``content_block_start`` /
``content_block_delta`` / ``content_block_stop`` keyed by ``index``, then ``message_delta``
(``stop_reason``, cumulative ``usage``) and ``message_stop``; ``ping`` may appear anywhere and an
``error`` event may end the stream early. Where the reference is silent the behaviour of
``@ai-sdk/anthropic`` (vercel/ai ``packages/anthropic/src/anthropic-language-model.ts``,
``map-anthropic-stop-reason.ts``, ``map-anthropic-citation.ts``, ``convert-anthropic-usage.ts``,
commit ed857f5) is followed. The payload's JSON ``type`` decides, never the SSE ``event:`` name
(JSONL dumps have none); the name is only a fallback for a payload without ``type``.

Content blocks → AG-UI (through :class:`~agui_codecs.builder.RunBuilder`):

* ``text``: TEXT_MESSAGE_*. Consecutive text blocks (a web-search answer is split into many
  blocks around its citations) *continue one text message*: a text block's stop does not end
  the message; the next non-text block (or the run's end) does. So text after a tool call,
  thinking or any other block starts a new message. ``citations_delta`` (and a text block's
  own ``citations``) become CUSTOM ``source`` events.
* ``thinking``: REASONING_* keyed by block index; ``signature_delta`` becomes
  REASONING_ENCRYPTED_VALUE (metadata ``field: "signature"``) before the reasoning message
  ends. ``redacted_thinking``: a reasoning message holding only REASONING_ENCRYPTED_VALUE with
  ``field: "redactedData"``.
* ``tool_use``: TOOL_CALL_START/ARGS/END keyed by block index, with the block's ``toolu_`` id.
  ``input_json_delta`` fragments are forwarded as they come (empty ones skipped). An ``input``
  that is already a non-empty JSON value in ``content_block_start`` (programmatic tool calling,
  newer server tools) is sent as one ARGS at once and later fragments are ignored; a call that
  got no argument text at all gets ARGS ``"{}"`` before END, so the AG-UI client's
  ``function.arguments`` parses and the AI SDK encoder yields ``input: {}``.
* server-side calls (``server_tool_use``, ``mcp_tool_use``, any other ``*_tool_use``): the same,
  with TOOL_CALL_START ``metadata.providerExecuted``. Their results (``web_search_tool_result``,
  ``web_fetch_tool_result``, ``code_execution_tool_result``, ``mcp_tool_result``, any
  ``*_tool_result``) become TOOL_CALL_RESULT whose content is the JSON text of the block's
  ``content``; each ``web_search_tool_result`` hit with a ``url`` is also a ``source``.
* any other block type (``compaction``, ``container_upload``, future ones) is not dropped: at
  its ``content_block_stop`` it becomes CUSTOM ``anthropic.content_block`` with value
  ``{"index", "contentBlock": <start block>, "deltas": [<raw delta objects>]}`` so nothing the
  next request may need to send back is lost. Unknown delta types on known blocks and unknown
  top-level event types are ignored, as the API's versioning policy asks of clients.

Sources are deduplicated per run by ``(sourceType, sourceId)``; ``sourceId`` is the URL for
URL sources and ``file_id`` or the ``document_index`` for document citations (as the AI SDK).

End of run: ``message_stop`` → RUN_FINISHED with ``finishReason`` from :data:`STOP_REASONS`
(``other`` for unknown or missing), ``providerFinishReason`` = raw ``stop_reason``, plus
``stopSequence`` / ``stopDetails`` when given; ``refusal`` → ``content-filter`` and
``metadata.refusal`` (``stop_details.explanation`` or a fixed sentence), so a refusal with no
content is never an empty ``stop``. An ``error`` event → RUN_ERROR with the error ``type`` as
code (``overloaded_error``). EOF without ``message_stop`` → RUN_ERROR ``UPSTREAM_TRUNCATED``.
A non-streaming ``message`` object is accepted too (translated as if streamed).

Usage: ``message_start.message.usage`` then each ``message_delta.usage`` (later non-null
values override). AG-UI ``TokenUsage``: ``inputTokens`` = ``input_tokens`` +
``cache_read_input_tokens`` + ``cache_creation_input_tokens``, ``cachedInputTokens`` = cache
read, ``cacheWriteInputTokens`` = cache creation, ``outputTokens``, ``reasoningTokens`` =
``output_tokens_details.thinking_tokens``, ``totalTokens`` = input + output. When ``iterations``
is present (compaction), the top-level counts exclude the compaction pass, so the four counts
are summed over the ``compaction`` and ``message`` iterations instead (unless a
``fallback_message`` iteration shows the top level already describes the served answer).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ClassVar, Final

from ag_ui.core import TokenUsage

from ... import jsontext
from ...endings import ANTHROPIC_STOP_REASONS, canonical_finish
from ...errors import MalformedUpstreamError
from ...framing import DONE, Frame
from ..base import StreamDecoder, upstream_error

__all__ = ["REFUSAL_FALLBACK", "STOP_REASONS", "UNKNOWN_BLOCK_EVENT", "AnthropicDecoder"]

STOP_REASONS: Final = ANTHROPIC_STOP_REASONS
"""Anthropic ``stop_reason`` → canonical finish reason (:mod:`agui_codecs.endings`); anything
else maps to ``other``."""

UNKNOWN_BLOCK_EVENT: Final = "anthropic.content_block"
"""CUSTOM event name carrying a content block of a type this decoder does not translate."""

REFUSAL_FALLBACK: Final = "The model declined to respond (stop_reason: refusal)."
"""``metadata.refusal`` when a refusal comes without ``stop_details.explanation``."""

_TEXT: Final = "text"  # RunBuilder key of the (continuing) text message
_USAGE_FIELDS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_EXECUTOR_ITERATIONS: Final = frozenset({"compaction", "message"})


class _Block:
    """What is known about one open content block."""

    __slots__ = ("args_final", "deltas", "kind", "raw")

    def __init__(self, kind: str, raw: dict[str, Any] | None = None) -> None:
        self.kind = kind  # "text" | "reasoning" | "tool" | "result" | "unknown"
        self.raw = raw  # the start block, kept for unknown kinds
        self.deltas: list[dict[str, Any]] = []
        self.args_final = False  # tool arguments already sent whole


def _kind(item: dict[str, Any]) -> str | None:
    """The ``type`` of an object, when it is a string."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else None


def _count(value: Any) -> int | None:
    """A token count, or ``None`` when ``value`` is not a non-negative integer."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


class AnthropicDecoder(StreamDecoder):
    """Anthropic Messages event stream → AG-UI run (see the module docstring).

    Accepts the options of :class:`~agui_codecs.protocols.base.StreamDecoder`. Malformed input
    (bad JSON, a block event without an integer ``index``, a tool block without a name, a
    result without ``tool_use_id``) ends the run with RUN_ERROR ``UPSTREAM_MALFORMED``.
    """

    name: ClassVar[str] = "anthropic"
    provider: ClassVar[str] = "anthropic"

    _HANDLERS: ClassVar[dict[str, Callable[[AnthropicDecoder, dict[str, Any]], None]]]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._blocks: dict[Hashable, _Block] = {}
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self._stop_details: dict[str, Any] | None = None
        self._sources: set[tuple[str, str]] = set()

    # -- dispatch -------------------------------------------------------------------------
    fast_deltas: ClassVar[bool] = True
    """Take text and thinking deltas of an open block by :meth:`_delta_only` (the same
    events)."""

    def handle(self, frame: Frame) -> None:
        """Translate one stream event (dispatch on its JSON ``type`` via ``_HANDLERS``)."""
        if self.fast_deltas and self._delta_only(frame.data):
            return
        if frame.data is DONE:
            return  # not part of Anthropic's protocol; some proxies add it. EOF decides.
        payload = self.obj(frame.data, "Anthropic stream event")
        kind = payload.get("type")
        if not isinstance(kind, str) or not kind:
            if frame.event and frame.event != "message":
                kind = frame.event
            else:
                raise MalformedUpstreamError("Anthropic stream event has no 'type'")
        handler = self._HANDLERS.get(kind)
        if handler is not None:
            handler(self, payload)
        # else: an event type newer than this decoder; ignored (API versioning policy).

    def _delta_only(self, payload: Any) -> bool:
        """The fast path of :meth:`handle`: a ``content_block_delta`` with an integer
        ``index`` naming an open block of a known kind, whose ``delta`` is a
        ``text_delta`` or ``thinking_delta`` with string text; for it the steps of
        :meth:`handle` (dispatch, index and shape checks, :meth:`_delta`) come down to one
        builder call. Returns False, having done nothing, for any other payload.
        ``tests/codecs/test_anthropic_fast_path.py`` checks both ways give the same events
        (hypothesis)."""
        if type(payload) is not dict or payload.get("type") != "content_block_delta":
            return False
        index, delta = payload.get("index"), payload.get("delta")
        if type(index) is not int or type(delta) is not dict:
            return False
        block = self._blocks.get(index)
        if block is None or block.kind == "unknown":
            return False
        dtype = delta.get("type")
        if dtype == "text_delta":
            text = delta.get("text")
            if type(text) is not str:
                return False
            if text:
                self.run.text(text, key=_TEXT)
            return True
        if dtype == "thinking_delta":
            thinking = delta.get("thinking")
            if type(thinking) is not str:
                return False
            if thinking:
                self.run.reasoning(thinking, key=index)
            return True
        return False

    def _ignore(self, payload: dict[str, Any]) -> None:
        """``ping``: keep-alive, no content."""

    def _on_message_start(self, payload: dict[str, Any]) -> None:
        self._open_message(self.obj(payload.get("message"), "message_start.message"))

    def _on_message(self, payload: dict[str, Any]) -> None:
        """A whole non-streaming ``message`` object: translate it as if it had streamed."""
        self._open_message(payload)
        self._complete()

    def _on_block_start(self, payload: dict[str, Any]) -> None:
        block = self.obj(payload.get("content_block"), "content_block_start.content_block")
        self._start_block(self._index(payload), block)

    def _on_block_delta(self, payload: dict[str, Any]) -> None:
        self._delta(
            self._index(payload), self.obj(payload.get("delta"), "content_block_delta.delta")
        )

    def _on_block_stop(self, payload: dict[str, Any]) -> None:
        self._stop_block(self._index(payload))

    def _on_message_delta(self, payload: dict[str, Any]) -> None:
        delta = self.obj(payload.get("delta") or {}, "message_delta.delta")
        self._note_stop(delta)
        if payload.get("usage"):
            self._merge_usage(self.obj(payload["usage"], "message_delta.usage"))

    def _on_message_stop(self, payload: dict[str, Any]) -> None:
        self._complete()

    def _on_error(self, payload: dict[str, Any]) -> None:
        code, message = upstream_error(payload.get("error"))
        self.run.fail(code, message, usage=self._token_usage())

    # -- message level --------------------------------------------------------------------
    def _open_message(self, message: dict[str, Any]) -> None:
        msg_id, model = message.get("id"), message.get("model")
        self.run.start(
            upstream_id=msg_id if isinstance(msg_id, str) and msg_id else None,
            model=model if isinstance(model, str) and model else None,
        )
        if message.get("usage"):
            self._merge_usage(self.obj(message["usage"], "message.usage"))
        self._note_stop(message)
        # Normally empty when streaming; pre-filled for deferred programmatic tool calls, and
        # the whole answer for a non-streaming message. Keys stay apart from block indices.
        for i, block in enumerate(self.arr(message.get("content"), "message.content")):
            self._start_block(("content", i), self.obj(block, "message.content[]"))
            self._stop_block(("content", i))

    def _note_stop(self, holder: dict[str, Any]) -> None:
        if isinstance(holder.get("stop_reason"), str):
            self._stop_reason = holder["stop_reason"]
        if isinstance(holder.get("stop_sequence"), str):
            self._stop_sequence = holder["stop_sequence"]
        if isinstance(holder.get("stop_details"), dict):
            self._stop_details = holder["stop_details"]

    def _merge_usage(self, usage: dict[str, Any]) -> None:
        for key, value in usage.items():
            if value is not None:
                self._usage[key] = value

    def _token_usage(self) -> TokenUsage | None:
        u = self._usage
        if not u:
            return None
        counts = {f: _count(u.get(f)) for f in _USAGE_FIELDS}
        listed = u.get("iterations")  # usage is advisory: a malformed list counts as absent
        iterations = (
            [it for it in listed if isinstance(it, dict)] if isinstance(listed, list) else []
        )
        if not any(it.get("type") == "fallback_message" for it in iterations):
            executor = [it for it in iterations if _kind(it) in _EXECUTOR_ITERATIONS]
            if executor:
                counts = {f: sum(_count(it.get(f)) or 0 for it in executor) for f in _USAGE_FIELDS}
        fresh, output = counts["input_tokens"], counts["output_tokens"]
        read, write = counts["cache_read_input_tokens"], counts["cache_creation_input_tokens"]
        known_input = [c for c in (fresh, read, write) if c is not None]
        input_tokens = sum(known_input) if known_input else None
        total = None
        if input_tokens is not None or output is not None:
            total = (input_tokens or 0) + (output or 0)
        details = u.get("output_tokens_details")
        reasoning = _count(details.get("thinking_tokens")) if isinstance(details, dict) else None
        return self.run.usage(
            input_tokens=input_tokens,
            output_tokens=output,
            total_tokens=total,
            reasoning_tokens=reasoning,
            cached_input_tokens=read,
            cache_write_input_tokens=write,
        )

    def _complete(self) -> None:
        reason = self._stop_reason
        metadata: dict[str, Any] = {}
        if self._stop_sequence is not None:
            metadata["stopSequence"] = self._stop_sequence
        if self._stop_details is not None:
            metadata["stopDetails"] = self._stop_details
        if reason == "refusal":
            explanation = (self._stop_details or {}).get("explanation")
            metadata["refusal"] = (
                explanation if isinstance(explanation, str) and explanation else REFUSAL_FALLBACK
            )
        self.run.finish(
            finish_reason=canonical_finish(STOP_REASONS, reason),
            provider_finish_reason=reason,
            usage=self._token_usage(),
            metadata=metadata or None,
        )

    def finalize(self) -> None:
        """EOF before ``message_stop``: the stream was cut, whatever was seen before."""
        self.run.fail(
            "UPSTREAM_TRUNCATED",
            "Anthropic stream ended without message_stop",
            usage=self._token_usage(),
        )

    # -- content blocks -------------------------------------------------------------------
    @staticmethod
    def _index(payload: dict[str, Any]) -> int:
        index = payload.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise MalformedUpstreamError(f"{payload.get('type')} has no integer 'index'")
        return index

    def _start_block(self, key: Hashable, block: dict[str, Any]) -> None:
        if key in self._blocks:
            self._stop_block(key)  # a restarted index: finish the old block first
        btype = block.get("type")
        btype = btype if isinstance(btype, str) else ""
        run = self.run
        if btype == "text":
            self._blocks[key] = _Block("text")
            text = block.get("text")
            run.text(text if isinstance(text, str) else "", key=_TEXT)
            for citation in self.arr(block.get("citations"), "text block citations"):
                self._cite(citation)
            return
        run.close_text()  # any other block ends the continuing text message
        if btype == "thinking":
            self._blocks[key] = _Block("reasoning")
            thinking = block.get("thinking")
            run.reasoning(thinking if isinstance(thinking, str) else "", key=key)
            if isinstance(block.get("signature"), str) and block["signature"]:
                run.reasoning_encrypted(block["signature"], key=key, field="signature")
        elif btype == "redacted_thinking":
            self._blocks[key] = _Block("reasoning")
            data = block.get("data")
            if isinstance(data, str) and data:
                run.reasoning_encrypted(data, key=key, field="redactedData")
            else:
                run.reasoning("", key=key)
        elif btype.endswith("tool_use"):
            self._tool_start(key, btype, block)
        elif btype.endswith("_tool_result"):
            self._tool_result(key, btype, block)
        else:
            self._blocks[key] = _Block("unknown", block)

    def _tool_start(self, key: Hashable, btype: str, block: dict[str, Any]) -> None:
        name, call_id = block.get("name"), block.get("id")
        if not isinstance(name, str) or not name:
            raise MalformedUpstreamError(f"{btype} block has no 'name'")
        self.run.tool_start(
            key,
            name,
            call_id if isinstance(call_id, str) and call_id else None,
            provider_executed=btype != "tool_use",
        )
        state = self._blocks[key] = _Block("tool")
        initial = block.get("input")
        if isinstance(initial, str) and initial:
            self.run.tool_args(key, initial)
            state.args_final = True
        elif isinstance(initial, dict | list) and initial:
            self.run.tool_args(key, jsontext.dumps(initial))
            state.args_final = True

    def _tool_result(self, key: Hashable, btype: str, block: dict[str, Any]) -> None:
        tool_use_id = block.get("tool_use_id")
        if not isinstance(tool_use_id, str) or not tool_use_id:
            raise MalformedUpstreamError(f"{btype} block has no 'tool_use_id'")
        content = block.get("content")
        self.run.tool_result(tool_use_id, jsontext.dumps(content))
        if btype == "web_search_tool_result" and isinstance(content, list):
            for hit in content:
                if isinstance(hit, dict) and isinstance(hit.get("url"), str) and hit["url"]:
                    self._add_source("url", hit["url"], url=hit["url"], title=hit.get("title"))
        self._blocks[key] = _Block("result")

    def _delta(self, key: Hashable, delta: dict[str, Any]) -> None:
        block = self._blocks.get(key)
        if block is not None and block.kind == "unknown":
            block.deltas.append(delta)
            return
        dtype = delta.get("type")
        run = self.run
        if dtype == "text_delta":
            if isinstance(delta.get("text"), str) and delta["text"]:
                run.text(delta["text"], key=_TEXT)
        elif dtype == "thinking_delta":
            if isinstance(delta.get("thinking"), str) and delta["thinking"]:
                run.reasoning(delta["thinking"], key=key)
        elif dtype == "signature_delta":
            if isinstance(delta.get("signature"), str) and delta["signature"]:
                run.reasoning_encrypted(delta["signature"], key=key, field="signature")
        elif dtype == "input_json_delta":
            if block is None or block.kind != "tool":
                raise MalformedUpstreamError(f"input_json_delta for block {key!r}, not a tool call")
            fragment = delta.get("partial_json")
            if not block.args_final and isinstance(fragment, str):
                run.tool_args(key, fragment)
        elif dtype == "citations_delta":
            self._cite(delta.get("citation"))
        # else: a delta type newer than this decoder on a known block; ignored.

    def _stop_block(self, key: Hashable) -> None:
        block = self._blocks.pop(key, None)
        if block is None:
            return
        if block.kind == "reasoning":
            self.run.end_reasoning(key)
        elif block.kind == "tool":
            if not self.run.tool_has_args(key):
                self.run.tool_args(key, "{}")  # no input at all: the empty object
            self.run.end_tool(key)
        elif block.kind == "unknown":
            index = key if isinstance(key, int) else None
            self.run.custom(
                UNKNOWN_BLOCK_EVENT,
                {"index": index, "contentBlock": block.raw, "deltas": block.deltas},
            )
        # "text" stays open (consecutive text blocks continue it); "result" has nothing open.

    # -- citations ------------------------------------------------------------------------
    def _cite(self, citation: Any) -> None:
        """Turn one citation object into a ``source`` (unknown citation types are skipped)."""
        if not isinstance(citation, dict):
            return
        ctype = citation.get("type")
        if ctype in ("web_search_result_location", "search_result_location"):
            url = citation.get("url" if ctype == "web_search_result_location" else "source")
            if isinstance(url, str) and url:
                self._add_source("url", url, url=url, title=citation.get("title"))
        elif ctype in ("char_location", "page_location", "content_block_location"):
            doc = citation.get("document_index")
            file_id = citation.get("file_id")
            source_id = file_id if isinstance(file_id, str) and file_id else str(doc)
            title = citation.get("document_title")
            self._add_source(
                "document",
                source_id,
                title=title if isinstance(title, str) and title else f"Document {doc}",
                mediaType="application/pdf" if ctype == "page_location" else "text/plain",
            )

    def _add_source(self, source_type: str, source_id: str, **fields: Any) -> None:
        if (source_type, source_id) in self._sources:
            return
        self._sources.add((source_type, source_id))
        value: dict[str, Any] = {"sourceType": source_type, "sourceId": source_id}
        value.update({k: str(v) for k, v in fields.items() if isinstance(v, str) and v})
        self.run.source(value)

    _HANDLERS = {
        "message_start": _on_message_start,
        "content_block_start": _on_block_start,
        "content_block_delta": _on_block_delta,
        "content_block_stop": _on_block_stop,
        "message_delta": _on_message_delta,
        "message_stop": _on_message_stop,
        "ping": _ignore,
        "error": _on_error,
        "message": _on_message,
    }
