"""Decoder for OpenAI Chat Completions streams (``stream: true``) and compatible hosts.

Follows the Chat Completions streaming reference (``chat.completion.chunk`` objects, API
2024-2025) and the quirks of compatible hosts recorded in ``tests/corpus/openai-chat``:

* ``choices[0].delta.content`` (string, or Mistral's array of ``text``/``thinking`` parts)
  becomes TEXT_MESSAGE_*; ``delta.refusal`` becomes text too, flagged ``metadata.refusal`` on
  its TEXT_MESSAGE_START and reported as RUN_FINISHED ``metadata.refusal``;
* ``delta.reasoning_content`` (DeepSeek, xAI) or ``delta.reasoning`` (OpenRouter, Groq)
  become REASONING_*; a reasoning message read from ``reasoning_content`` carries the DeepSeek
  mark (one REASONING_ENCRYPTED_VALUE ``{"type":"reasoning_content"}`` just before it ends,
  :mod:`agui_codecs.protocols._reasoning_content`) so the next request can send its text
  back; OpenRouter's ``delta.reasoning_details[]`` entries (OpenRouter
  "Reasoning Tokens", ``reasoning_details`` array structure) take precedence over the
  flattened ``reasoning`` string: one reasoning message per entry (``reasoning.text`` /
  ``reasoning.summary`` text as its content), the rest of the entry (``signature``, ``data``,
  ``id``, ``format``, ``index``) kept as REASONING_ENCRYPTED_VALUE for the next request
  (:mod:`agui_codecs.protocols._reasoning_details`);
* ``delta.tool_calls[]`` are keyed by their ``index`` field (not list position); arguments
  may arrive whole in the chunk that carries the id and name, and are emitted as exactly one
  TOOL_CALL_ARGS then. Which piece begins another call (issue 11, identity): a new non-empty
  ``id`` at a used index with a ``function.name`` does, unless the open call's arguments are
  an unfinished JSON text; an ``id`` that changes without a name is the host renaming the call
  on every chunk and continues it; a piece with neither ``id`` nor ``index`` (hosts that send
  each call whole that way) begins another call when it is named and the open call's
  arguments are a complete JSON text. Ids the provider repeats (``call_0`` every turn) are
  made unique by the builder (:mod:`agui_codecs.identity`);
* ``delta.annotations[]`` ``url_citation`` entries become CUSTOM ``source`` events;
* ``usage`` (on the last chunk, often with ``choices: []``, or inside ``x_groq``) lands on
  RUN_FINISHED; an ``error`` object, or an SSE ``event: error``, ends the run with RUN_ERROR;
* the run finishes at ``[DONE]`` (also without any ``finish_reason``: a normal end, reason
  ``other``) or at EOF after a ``finish_reason`` was seen; EOF with neither is RUN_ERROR
  ``UPSTREAM_TRUNCATED`` (tool calls still open end with ``metadata.incomplete``). The endings
  table of :mod:`agui_codecs.endings` applies: a turn with tool calls that a host marks
  ``stop`` (Ollama, some vLLM builds), or that gets a later ``stop`` after ``tool_calls``, ends
  ``tool-calls``; ``providerFinishReason`` is the first ``finish_reason`` received other than
  ``stop`` (else ``stop``): a later ``stop`` adds nothing. Only
  choice ``index`` 0 is translated (``n > 1`` streams have no AG-UI equivalent in one run).

Non-streamed replies (``stream: false``, or a host that ignores ``stream: true``): one
``chat.completion`` object whose ``choices[].message`` holds the whole answer (Chat
Completions reference, "The chat completion object"). It is the same translation with
``message`` in place of ``delta``: ``content`` (string or parts), ``refusal``, the reasoning
fields, ``annotations`` and ``tool_calls`` (keyed by list position, which is how they come
without ``index``; ``function.arguments`` whole), then ``finish_reason`` and ``usage``; the run
ends with that object (``finish_reason`` missing: ``other``). The body may be compact or
pretty-printed (``api.openai.com`` indents it): a body whose first line is a lone ``{`` is
read whole at EOF as one JSON document (at most ``max_event_size`` bytes).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ... import jsontext
from ...endings import OPENAI_CHAT_FINISH_REASONS, canonical_finish
from ...errors import EventTooLargeError, MalformedUpstreamError
from ...framing import DONE, Frame, FrameDecoder, Framing
from .. import _reasoning_content as reasoning_content
from .._reasoning_details import ReasoningDetailsStream
from ..base import Framer, StreamDecoder, upstream_error

__all__ = ["OpenAIChatDecoder"]

FINISH_REASONS = OPENAI_CHAT_FINISH_REASONS
"""``finish_reason`` → canonical finish reason (:mod:`agui_codecs.endings`)."""


_TEXT_KEYS: frozenset[str] = frozenset({"content", "role"})
"""The keys of a ``delta`` :meth:`OpenAIChatDecoder._text_only` takes."""


def _text(value: Any) -> str | None:
    """A non-empty string id or label, else ``None`` (hosts send ``""``, ``null`` or worse)."""
    return value if isinstance(value, str) and value else None


def _complete_json(text: str) -> bool:
    """True when ``text`` is one whole JSON value (a call's arguments are complete)."""
    try:
        jsontext.parse(text.encode("utf-8", "surrogatepass"))
    except (jsontext.JSONDecodeError, ValueError):
        return False
    return True


def _mapping(value: Any) -> dict[str, Any]:
    """An optional details object of ``usage``; anything but an object counts as absent."""
    return value if isinstance(value, dict) else {}


class _DocumentFrames(FrameDecoder):
    """Input framing that also reads one pretty-printed JSON document (a non-streamed reply).

    A :class:`~agui_codecs.framing.FrameDecoder` (``auto`` or ``jsonl`` framing) that holds the
    bytes until the body's first line is complete: a body whose first line is only ``{``
    (indented JSON: no JSON-lines body or SSE stream starts so) is buffered and decoded whole at
    EOF, any other body is framed as usual.
    """

    def __init__(self, framing: Framing, *, max_event_size: int) -> None:
        super().__init__(framing, max_event_size=max_event_size)
        self._doc = bytearray()
        self._doc_mode = "undecided"  # -> "document" | "frames"
        self._doc_failed = False

    def feed(self, data: bytes) -> list[Frame]:
        if self._doc_mode == "frames":
            return super().feed(data)
        if self._doc_failed:
            return []
        self._doc += data
        if self._doc_mode == "undecided":
            head = bytes(self._doc).lstrip(b"\xef\xbb\xbf \t\r\n")
            line_end = head.find(b"\n")
            if head[:1] not in (b"", b"{") or (line_end >= 0 and head[:line_end].strip() != b"{"):
                return self._to_frames()
            if line_end >= 0:
                self._doc_mode = "document"
            elif len(self._doc) > self.max_event_size:
                return self._to_frames()  # the line framing reports the oversized line
        if len(self._doc) > self.max_event_size:
            self._doc_failed = True
            self._doc.clear()
            error = EventTooLargeError(
                f"JSON document larger than {self.max_event_size} bytes",
                limit=self.max_event_size,
            )
            return [Frame(None, None, error)]
        return []

    def close(self) -> list[Frame]:
        if self._doc_mode != "document":
            return self._to_frames() + super().close()
        super().close()
        if self._doc_failed:
            return []
        raw, self._doc = bytes(self._doc), bytearray()
        try:
            value, surrogates = jsontext.parse(raw)
            return [Frame(value, surrogates=surrogates)]
        except jsontext.JSONDecodeError as exc:
            error = MalformedUpstreamError(f"chat.completion body is not valid JSON ({exc})")
            return [Frame(None, None, error)]

    def _to_frames(self) -> list[Frame]:
        self._doc_mode = "frames"
        data, self._doc = bytes(self._doc), bytearray()
        return super().feed(data) if data else []


class OpenAIChatDecoder(StreamDecoder):
    """OpenAI Chat Completions chunk stream (or one ``chat.completion``) → AG-UI run."""

    name: ClassVar[str] = "openai-chat"
    provider: ClassVar[str] = "openai"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None
        self._refusal: list[str] = []
        self._call_ids: dict[int, str | None] = {}  # tool index -> provider id of its call
        self._call_args: dict[int, list[str]] = {}  # tool index -> arguments of its call
        self._details = ReasoningDetailsStream(self.run)

    def frame_decoder(self, framing: Framing, *, max_event_size: int) -> Framer:
        """:class:`_DocumentFrames` for ``auto`` / ``jsonl`` (a non-streamed reply may span
        lines), else the base framing."""
        if framing in ("auto", "jsonl"):
            return _DocumentFrames(framing, max_event_size=max_event_size)
        return super().frame_decoder(framing, max_event_size=max_event_size)

    fast_text: ClassVar[bool] = True
    """Take a started run's plain text chunk by :meth:`_text_only` (the same events)."""

    def handle(self, frame: Frame) -> None:
        if frame.data is DONE:
            self._complete(done=True)
            return
        if self.fast_text and self._text_only(frame):
            return
        chunk = self.obj(frame.data, "chat.completion.chunk")
        upstream_id, model = _text(chunk.get("id")), _text(chunk.get("model"))
        if frame.event == "error" or chunk.get("error"):
            self.run.start(upstream_id=upstream_id, model=model)
            code, message = upstream_error(chunk.get("error", chunk))
            self.run.fail(code, message, usage=self._token_usage())
            return
        if not self.run.started and not chunk.get("id") and not chunk.get("choices"):
            return  # Azure's leading prompt_filter_results chunk: nothing to say yet
        self.run.start(upstream_id=upstream_id, model=model)
        usage = chunk.get("usage") or self.obj(chunk.get("x_groq") or {}, "x_groq").get("usage")
        if usage:
            self._usage = self.obj(usage, "usage")
        choices = [self.obj(c, "choice") for c in self.arr(chunk.get("choices"), "choices")]
        # A non-streamed reply: ``message`` in place of ``delta`` (the ``object`` label alone is
        # not trusted: a stream chunk carries a ``delta`` whatever it is called).
        streamed = any(choice.get("delta") is not None for choice in choices)
        whole = not streamed and (
            chunk.get("object") == "chat.completion"
            or any(choice.get("message") is not None for choice in choices)
        )
        for choice in choices:
            if choice.get("index", 0) != 0:
                continue
            if whole:
                self._delta(self.obj(choice.get("message") or {}, "message"), whole=True)
            else:
                self._delta(self.obj(choice.get("delta") or {}, "delta"))
            if choice.get("finish_reason") and self._finish in (None, "stop"):
                # a later ``stop`` (some hosts send one after ``tool_calls``) changes nothing
                self._finish = str(choice["finish_reason"])
        if whole:
            self._complete(whole=True)

    def _text_only(self, frame: Frame) -> bool:
        """The fast path of :meth:`handle`: a chunk of a started run whose model is known, with
        no usage, no error, and one choice of index 0, without ``finish_reason``, whose
        ``delta`` holds nothing but string ``content`` (and ``role``). Most of a stream is
        such chunks; for them the steps of :meth:`handle` come down to ``run.text(content)``
        (``start`` changes nothing once the model is set; no reasoning, refusal, tool call or
        annotation key is there to read). Returns False, having done nothing, for any other
        frame. ``tests/codecs/test_openai_chat_fast_path.py`` checks both ways give the same
        events (hypothesis)."""
        chunk = frame.data
        if type(chunk) is not dict or frame.event == "error" or not self.run.model:
            return False
        choices = chunk.get("choices")
        if (
            type(choices) is not list
            or len(choices) != 1
            or chunk.get("error")
            or chunk.get("usage")
            or "x_groq" in chunk
            or not self.run.started
        ):
            return False
        choice = choices[0]
        if type(choice) is not dict or choice.get("finish_reason") or choice.get("index", 0) != 0:
            return False
        delta = choice.get("delta")
        if type(delta) is not dict or not delta.keys() <= _TEXT_KEYS:
            return False
        content = delta.get("content")
        if type(content) is not str:
            return False
        if content:
            self.run.text(content)
        return True

    def _delta(self, delta: dict[str, Any], *, whole: bool = False) -> None:
        """Translate a ``delta`` (or, ``whole``, a non-streamed ``message``)."""
        run = self.run
        details = self.arr(delta.get("reasoning_details"), "delta.reasoning_details")
        # OpenRouter sends the entries' text flattened in ``reasoning`` too: with entries,
        # they are the reasoning (the string only when no entry of the delta had text).
        texted = self._details.feed(details, whole=whole) if details else False
        if not texted:
            for key_name in ("reasoning_content", "reasoning"):
                value = delta.get(key_name)
                if isinstance(value, str) and value:
                    key = self._details.key or "reasoning"
                    run.reasoning(value, key=key)
                    if key_name == "reasoning_content":  # DeepSeek wants it back (module doc)
                        run.hold_reasoning_encrypted(
                            reasoning_content.MARK,
                            key=key,
                            field=reasoning_content.FIELD,
                            provider=reasoning_content.PROVIDER,
                        )
                    break
        content = delta.get("content")
        if isinstance(content, str):
            if content:
                run.text(content)
        elif isinstance(content, list):
            self._content_parts(content)
        elif content is not None:
            raise MalformedUpstreamError("delta.content is neither a string nor a list")
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._refusal.append(refusal)
            run.text(refusal, key="refusal", metadata={"refusal": True})
        for position, call in enumerate(self.arr(delta.get("tool_calls"), "delta.tool_calls")):
            call = self.obj(call, "tool_calls[]")
            if whole and "index" not in call:  # a message lists each call once, whole
                call = {**call, "index": position}
            self._tool_delta(call)
        for annotation in self.arr(delta.get("annotations"), "delta.annotations"):
            if isinstance(annotation, dict) and annotation.get("type") == "url_citation":
                cite = annotation.get("url_citation") or {}
                if isinstance(cite, dict) and cite.get("url"):
                    source: dict[str, Any] = {
                        "sourceType": "url",
                        "sourceId": str(cite["url"]),
                        "url": str(cite["url"]),
                    }
                    if cite.get("title"):
                        source["title"] = str(cite["title"])
                    run.source(source)

    def _content_parts(self, parts: list[Any]) -> None:
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
                self.run.text(part["text"])
            elif kind == "thinking":
                inner = part.get("thinking")
                pieces = inner if isinstance(inner, list) else [{"text": inner}]
                for piece in pieces:
                    if isinstance(piece, dict) and isinstance(piece.get("text"), str):
                        if piece["text"]:
                            self.run.reasoning(piece["text"])

    def _tool_delta(self, call: dict[str, Any]) -> None:
        index = call.get("index", 0)
        if not isinstance(index, int):
            raise MalformedUpstreamError("tool_calls[].index is not an integer")
        function = self.obj(call.get("function") or {}, "tool_calls[].function")
        new_id, name = call.get("id"), function.get("name")
        if new_id is not None and not isinstance(new_id, str):
            raise MalformedUpstreamError("tool_calls[].id is not a string")
        if name is not None and not isinstance(name, str):
            raise MalformedUpstreamError("tool_calls[].function.name is not a string")
        if self._begins_call(index, new_id, name, indexed="index" in call):
            if not new_id and not name:
                # Arguments for an index never announced: nothing to attach them to.
                raise MalformedUpstreamError(f"tool call index {index} has no id or name")
            self.run.tool_start(index, name or "", new_id or None)
            self._call_ids[index], self._call_args[index] = new_id or None, []
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # some hosts send parsed arguments
            arguments = jsontext.dumps(arguments)
        if isinstance(arguments, str) and arguments:
            self._call_args[index].append(arguments)
            self.run.tool_args(index, arguments)

    def _begins_call(
        self, index: int, new_id: str | None, name: str | None, *, indexed: bool
    ) -> bool:
        """Whether a ``tool_calls[]`` piece at ``index`` begins another call (module docstring)."""
        if not self.run.tool_is_open(index):
            return True
        if not name:
            return False  # arguments, or an id renamed on every chunk: the open call goes on
        args = "".join(self._call_args.get(index, ()))
        if new_id and new_id != self._call_ids.get(index):
            return not args or _complete_json(args)
        return not indexed and not new_id and bool(args) and _complete_json(args)

    def _token_usage(self) -> Any:
        u = self._usage
        if not u:
            return None
        prompt_details = _mapping(u.get("prompt_tokens_details"))
        completion_details = _mapping(u.get("completion_tokens_details"))
        return self.run.usage(
            input_tokens=u.get("prompt_tokens"),
            output_tokens=u.get("completion_tokens"),
            total_tokens=u.get("total_tokens"),
            reasoning_tokens=completion_details.get("reasoning_tokens") or None,
            cached_input_tokens=prompt_details.get("cached_tokens") or None,
        )

    def _complete(self, *, whole: bool = False, done: bool = False) -> None:
        """Finish the run; ``whole``: the reply came in one object, complete by definition;
        ``done``: the stream's ``[DONE]`` marker, a normal end with or without a reason."""
        if self._finish is None and not (whole or done):
            self.run.fail("UPSTREAM_TRUNCATED", "stream ended without a finish_reason or [DONE]")
            return
        metadata = {"refusal": "".join(self._refusal)} if self._refusal else None
        reason = canonical_finish(FINISH_REASONS, self._finish)
        if self._refusal:
            reason = "content-filter"
        self.run.finish(
            finish_reason=reason,
            provider_finish_reason=self._finish,
            usage=self._token_usage(),
            metadata=metadata,
        )

    def finalize(self) -> None:
        self._complete()
