"""Decoder for Gemini ``streamGenerateContent`` bodies (Gemini API and Vertex AI) → AG-UI 1.0.

Input: ``GenerateContentResponse`` objects, either as SSE ``data:`` events (``?alt=sse``) or as
the default streamed JSON array (``[{...}\\n,\\r\\n{...}]``), or one per line (recorded
fixtures); :mod:`agui_codecs.framing` picks the framing. Follows the REST reference of
``models.streamGenerateContent`` (Gemini API v1beta, Vertex AI v1, 2025-2026) and the quirks in
``tests/corpus/gemini``; the part handling matches ``@ai-sdk/google``
(``packages/google/src/google-language-model.ts``, vercel/ai ``ed857f5``):

* ``text`` parts become TEXT_MESSAGE_*; ``thought: true`` parts become REASONING_*;
* ``thoughtSignature`` (on any part, also an empty-text trailing part) becomes
  REASONING_ENCRYPTED_VALUE, metadata ``{provider: "google", field: "thoughtSignature"}``:
  subtype ``tool-call`` for a ``functionCall`` / ``executableCode`` part (entity: its call
  id), ``message`` for a thought (its reasoning message) or a text part (its text message; the
  latest text message for an empty part; a reasoning message when there is no text at all);
* ``functionCall`` becomes TOOL_CALL_START/ARGS/END. Gemini rarely sends an ``id``: one is
  synthesized from the response id (``<responseId>-call``, ``-call-1``, ...), deterministic
  and used for every event of the call. Vertex streamed arguments (``willContinue`` +
  ``partialArgs[]`` of ``{jsonPath, stringValue|numberValue|boolValue|nullValue,
  willContinue}``; a part ``functionCall: {}`` ends the latest call, as does a ``partialArgs``
  chunk with no ``willContinue``) are *buffered*: the call opens when its name arrives and gets
  exactly one TOOL_CALL_ARGS, the JSON of the completed arguments, when it completes (or at the
  end of the turn). Concatenated ARGS therefore always parse and equal the final arguments;
  streaming them piecewise cannot guarantee that when a path is revisited;
* ``executableCode`` / ``codeExecutionResult`` become a provider-executed ``code_execution``
  call (``metadata.providerExecuted``) and its TOOL_CALL_RESULT ``{outcome, output}``;
* ``inlineData`` / ``fileData`` become CUSTOM ``file`` (``reasoning-file`` for thoughts)
  ``{url, mediaType[, providerMetadata]}`` (the AI SDK ``file`` chunk shape);
* ``groundingMetadata.groundingChunks`` (web, retrievedContext, maps, image),
  ``urlContextMetadata.urlMetadata`` and ``citationMetadata`` become CUSTOM ``source`` events,
  once per URL; the last grounding / URL-context metadata (``webSearchQueries``,
  ``searchEntryPoint``...) is kept on RUN_FINISHED ``metadata``;
* the last ``usageMetadata`` carrying counts becomes RUN_FINISHED ``usage`` in AG-UI
  accounting: input = prompt + toolUsePrompt, output = candidates + thoughts (reasoning =
  thoughts), cached input = cachedContent, total = totalTokenCount;
* ``finishReason``: STOP → stop (tool-calls when the turn called functions), MAX_TOKENS →
  length, SAFETY/RECITATION/BLOCKLIST/PROHIBITED_CONTENT/SPII/IMAGE_* → content-filter,
  everything else → other; MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL,
  TOO_MANY_TOOL_CALLS, MISSING_THOUGHT_SIGNATURE and MALFORMED_RESPONSE end the run with
  RUN_ERROR whose code is the reason. ``promptFeedback.blockReason`` → content-filter.
  ``finishMessage`` / ``safetyRatings`` / ``promptFeedback`` go to RUN_FINISHED metadata;
* an ``error`` object (``{code, message, status}``) ends the run with RUN_ERROR, code
  ``status`` (else ``HTTP_<code>``).

Gemini sends no terminator, so the run ends at EOF: RUN_FINISHED if a finish reason was seen,
else RUN_ERROR ``UPSTREAM_TRUNCATED``. Only candidate ``index`` 0 is translated.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final

from ag_ui.core import TokenUsage

from ... import jsontext
from ...endings import GEMINI_ERROR_FINISH_REASONS, GEMINI_FINISH_REASONS, canonical_finish
from ...errors import MalformedUpstreamError
from ...framing import DONE, Frame
from ..base import StreamDecoder, upstream_error

__all__ = [
    "ERROR_FINISH_REASONS",
    "FINISH_REASONS",
    "GeminiDecoder",
    "apply_partial_args",
    "google_error",
]

SIGNATURE_FIELD: Final = "thoughtSignature"

FINISH_REASONS: Final = GEMINI_FINISH_REASONS
"""Gemini ``FinishReason`` → canonical finish reason (:mod:`agui_codecs.endings`); unlisted
values map to ``other``."""

ERROR_FINISH_REASONS: Final = GEMINI_ERROR_FINISH_REASONS
"""Finish reasons that mean the turn failed: RUN_ERROR with the reason as ``code``."""

_COUNTS: Final = (
    "promptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "toolUsePromptTokenCount",
    "totalTokenCount",
)
_THOUGHT: Final = "thought"  # builder key of the open thought (reasoning) message
_MAX_LIST_LENGTH: Final = 65_536  # cap on an array built from partialArgs indexes
_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\[\s*'([^']*)'\s*\]|\[\s*\"([^\"]*)\"\s*\]")
_DOC_TYPES: Final = {
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".html": "text/html",
    ".doc": "application/msword",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


def _parse_path(path: Any) -> list[str | int]:
    """``"$.a.b[0]['c d']"`` → ``["a", "b", 0, "c d"]``; raises MalformedUpstreamError."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise MalformedUpstreamError(f"partialArgs jsonPath {path!r} does not start with '$'")
    segments: list[str | int] = []
    pos = 1
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if m is None:
            raise MalformedUpstreamError(f"unsupported partialArgs jsonPath {path!r}")
        name, index, single, double = m.groups()
        if index is not None:
            segments.append(int(index))
        else:
            segments.append(next(s for s in (name, single, double) if s is not None))
        pos = m.end()
    return segments


def apply_partial_args(args: dict[str, Any], partial: dict[str, Any]) -> None:
    """Apply one Vertex ``PartialArg`` to the arguments object ``args`` (in place).

    ``stringValue`` on a path that already holds a string continues that string; any other
    value (``numberValue``, ``boolValue``, ``nullValue``, or a first ``stringValue``) sets the
    leaf, creating objects and arrays on the way. A PartialArg without a value is ignored.

    Raises:
        MalformedUpstreamError: bad ``jsonPath``, a path through a non-container, or an
            array index past the size cap.
    """
    segments = _parse_path(partial.get("jsonPath"))
    if not segments:
        return  # "$" alone names the arguments object itself: nothing to set
    value: Any
    if isinstance(partial.get("stringValue"), str):
        value = partial["stringValue"]
    elif isinstance(partial.get("numberValue"), int | float) and not isinstance(
        partial.get("numberValue"), bool
    ):
        value = partial["numberValue"]
    elif isinstance(partial.get("boolValue"), bool):
        value = partial["boolValue"]
    elif "nullValue" in partial:
        value = None
    else:
        return
    container: Any = args
    for segment, following in zip(segments, [*segments[1:], None], strict=True):
        if following is None:
            _set(container, segment, value, continue_string=isinstance(value, str))
            return
        child = _get(container, segment)
        wanted: type = list if isinstance(following, int) else dict
        if child is None:
            child = wanted()
            _set(container, segment, child, continue_string=False)
        elif not isinstance(child, wanted):
            raise MalformedUpstreamError(f"partialArgs path {partial['jsonPath']!r} conflicts")
        container = child


def _get(container: Any, segment: str | int) -> Any:
    if isinstance(container, dict) and isinstance(segment, str):
        return container.get(segment)
    if isinstance(container, list) and isinstance(segment, int):
        return container[segment] if segment < len(container) else None
    raise MalformedUpstreamError("partialArgs path mixes object keys and array indexes")


def _set(container: Any, segment: str | int, value: Any, *, continue_string: bool) -> None:
    if isinstance(container, dict) and isinstance(segment, str):
        old = container.get(segment)
        container[segment] = old + value if continue_string and isinstance(old, str) else value
    elif isinstance(container, list) and isinstance(segment, int):
        if segment >= _MAX_LIST_LENGTH:
            raise MalformedUpstreamError(f"partialArgs array index {segment} is too large")
        container.extend([None] * (segment + 1 - len(container)))
        old = container[segment]
        container[segment] = old + value if continue_string and isinstance(old, str) else value
    else:
        raise MalformedUpstreamError("partialArgs path mixes object keys and array indexes")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def google_error(error: Any) -> tuple[str, str]:
    """``(code, message)`` of a Google API error object ``{code, message, status}``.

    The code is ``status`` (e.g. ``RESOURCE_EXHAUSTED``), else ``HTTP_<code>``, else
    ``UPSTREAM_ERROR`` (:func:`~agui_codecs.protocols.base.upstream_error` on the status).
    """
    if isinstance(error, dict) and _str(error.get("status")):
        error = {**error, "code": error["status"]}
    return upstream_error(error)


class _Call:
    """A function call whose arguments are still streaming (Vertex ``partialArgs``)."""

    __slots__ = ("args", "id", "key")

    def __init__(self, key: tuple[str, int], call_id: str, args: dict[str, Any]) -> None:
        self.key = key
        self.id = call_id
        self.args = args


class GeminiDecoder(StreamDecoder):
    """Gemini ``streamGenerateContent`` stream → AG-UI run (see the module docstring)."""

    name: ClassVar[str] = "gemini"
    provider: ClassVar[str] = "google"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._usage: dict[str, Any] | None = None
        self._finish: tuple[str, str] | None = None  # (provider reason, canonical reason)
        self._finish_meta: dict[str, Any] = {}
        self._grounding: dict[str, Any] | None = None
        self._url_context: dict[str, Any] | None = None
        self._sources: set[str] = set()
        self._streaming: list[_Call] = []  # calls with partialArgs still arriving, oldest first
        self._n_calls = 0
        self._function_calls = 0  # client function calls in this turn
        self._code_calls: list[str] = []  # executableCode call ids, in order
        self._code_ids: dict[str, str] = {}  # executableCode provider id -> its AG-UI id
        self._signatures: set[tuple[str, str]] = set()  # (entity id, value) already emitted

    # -- payloads -----------------------------------------------------------------------
    def handle(self, frame: Frame) -> None:
        if frame.data is DONE:
            return  # Gemini sends no terminator; tolerate one from a relay
        body = self.obj(frame.data, "GenerateContentResponse")
        self.run.start(
            upstream_id=_str(body.get("responseId")), model=_str(body.get("modelVersion"))
        )
        if body.get("error"):
            code, message = google_error(body["error"])
            self.run.fail(code, message, usage=self._token_usage())
            return
        usage = body.get("usageMetadata")
        if isinstance(usage, dict) and any(k in usage for k in _COUNTS):
            self._usage = usage
        feedback = body.get("promptFeedback")
        if isinstance(feedback, dict) and _str(feedback.get("blockReason")):
            self._finish = (feedback["blockReason"], "content-filter")
            self._finish_meta["promptFeedback"] = feedback
        candidates = body.get("candidates") or []
        if not isinstance(candidates, list):
            raise MalformedUpstreamError("candidates is not a list")
        for candidate in candidates:
            candidate = self.obj(candidate, "candidate")
            if candidate.get("index", 0) == 0:
                self._candidate(candidate)

    def _candidate(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        if content is not None:
            parts = self.obj(content, "candidate.content").get("parts") or []
            if not isinstance(parts, list):
                raise MalformedUpstreamError("candidate.content.parts is not a list")
            for part in parts:
                self._part(self.obj(part, "part"))
        self._citations(candidate)
        reason = _str(candidate.get("finishReason"))
        if reason is not None:
            self._finish = (reason, canonical_finish(FINISH_REASONS, reason))
            if _str(candidate.get("finishMessage")):
                self._finish_meta["finishMessage"] = candidate["finishMessage"]
            if candidate.get("safetyRatings") and self._finish[1] == "content-filter":
                self._finish_meta["safetyRatings"] = candidate["safetyRatings"]

    def _part(self, part: dict[str, Any]) -> None:
        sig = _str(part.get(SIGNATURE_FIELD))
        thought = part.get("thought") is True
        if "functionCall" in part:
            self._function_call(self.obj(part["functionCall"], "functionCall"), sig)
        elif "executableCode" in part:
            self._executable_code(self.obj(part["executableCode"], "executableCode"), sig)
        elif "codeExecutionResult" in part:
            self._code_result(self.obj(part["codeExecutionResult"], "codeExecutionResult"), sig)
        elif "inlineData" in part or "fileData" in part:
            self._file(part, sig, thought)
        elif "text" in part:
            text = part["text"]
            if not isinstance(text, str):
                raise MalformedUpstreamError("part.text is not a string")
            if thought:
                self.run.close_text()
                self.run.reasoning(text, key=_THOUGHT)
                if sig:
                    self.run.reasoning_encrypted(sig, key=_THOUGHT, field=SIGNATURE_FIELD)
                return
            message_id = self.run.text(text) if text else None
            if sig:
                self._message_signature(sig, message_id)
        elif sig:
            self._message_signature(sig, None)

    # -- signatures -----------------------------------------------------------------------
    def _call_signature(self, sig: str | None, call_id: str) -> None:
        if sig and (call_id, sig) not in self._signatures:
            self._signatures.add((call_id, sig))
            self.run.encrypted(  # call_id: the AG-UI id tool_start returned
                sig, subtype="tool-call", entity_id=call_id, field=SIGNATURE_FIELD, exact=True
            )

    def _message_signature(self, sig: str, message_id: str | None) -> None:
        entity = message_id or self.run.text_id() or self.run.last_text_id
        if entity is None:  # no text in this turn: keep it on a reasoning message
            self.run.reasoning_encrypted(sig, key=_THOUGHT, field=SIGNATURE_FIELD)
        elif (entity, sig) not in self._signatures:
            self._signatures.add((entity, sig))
            self.run.encrypted(sig, subtype="message", entity_id=entity, field=SIGNATURE_FIELD)

    # -- function calls -------------------------------------------------------------------
    def _open_call(self, name: str, call_id: Any, args: dict[str, Any]) -> _Call:
        self._n_calls += 1
        self._function_calls += 1
        key = ("call", self._n_calls)
        return _Call(key, self.run.tool_start(key, name, _str(call_id)), args)

    def _close_call(self, call: _Call) -> None:
        if call in self._streaming:
            self._streaming.remove(call)
        self.run.tool_args(call.key, jsontext.dumps(call.args))
        self.run.end_tool(call.key)

    def _function_call(self, fc: dict[str, Any], sig: str | None) -> None:
        name, args, partial = _str(fc.get("name")), fc.get("args"), fc.get("partialArgs")
        will_continue = fc.get("willContinue") is True
        if args is not None and not isinstance(args, dict):
            raise MalformedUpstreamError("functionCall.args is not an object")
        if partial is not None or (name and will_continue):
            if name:  # the first chunk of a streamed call
                call = self._open_call(name, fc.get("id"), dict(args or {}))
                self._streaming.append(call)
            elif self._streaming:
                call = self._streaming[-1]
            else:
                raise MalformedUpstreamError("functionCall.partialArgs with no call in progress")
            self._call_signature(sig, call.id)
            if partial is None:
                return
            if not isinstance(partial, list):
                raise MalformedUpstreamError("functionCall.partialArgs is not a list")
            done = not will_continue
            for item in partial:
                item = self.obj(item, "partialArgs[]")
                apply_partial_args(call.args, item)
                done = done and item.get("willContinue") is not True
            if done:
                self._close_call(call)
        elif name is None:
            if args is not None:
                raise MalformedUpstreamError("functionCall.args without a name")
            if self._streaming:
                latest = self._streaming[-1]
                self._call_signature(sig, latest.id)
                if "willContinue" not in fc:  # functionCall: {} ends the latest call
                    self._close_call(latest)
            elif sig:
                self._message_signature(sig, None)
        else:  # a whole call in one part (args may be absent: no arguments)
            call = self._open_call(name, fc.get("id"), args or {})
            self._call_signature(sig, call.id)
            self._close_call(call)

    # -- code execution, files ------------------------------------------------------------
    def _executable_code(self, code: dict[str, Any], sig: str | None) -> None:
        self._n_calls += 1
        key = ("code", self._n_calls)
        call_id = self.run.tool_start(
            key, "code_execution", _str(code.get("id")), provider_executed=True
        )
        self._code_calls.append(call_id)
        self._code_ids[_str(code.get("id")) or call_id] = call_id
        self._call_signature(sig, call_id)
        args = {k: code[k] for k in ("language", "code") if k in code}
        self.run.tool_args(key, jsontext.dumps(args))
        self.run.end_tool(key)

    def _code_result(self, result: dict[str, Any], sig: str | None) -> None:
        wanted = _str(result.get("id"))
        call_id = self._code_ids.get(wanted) if wanted else None
        if call_id is None and self._code_calls:
            call_id = self._code_calls[-1]
        if call_id is None:
            raise MalformedUpstreamError("codeExecutionResult with no executableCode before it")
        self._call_signature(sig, call_id)
        content = {"outcome": result.get("outcome"), "output": result.get("output") or ""}
        self.run.tool_result(call_id, jsontext.dumps(content), exact=True)

    def _file(self, part: dict[str, Any], sig: str | None, thought: bool) -> None:
        if "inlineData" in part:
            blob = self.obj(part["inlineData"], "inlineData")
            media_type = _str(blob.get("mimeType")) or "application/octet-stream"
            url = f"data:{media_type};base64,{blob.get('data') or ''}"
        else:
            ref = self.obj(part["fileData"], "fileData")
            media_type = _str(ref.get("mimeType")) or "application/octet-stream"
            url = str(ref.get("fileUri") or "")
        value: dict[str, Any] = {"url": url, "mediaType": media_type}
        if sig:
            value["providerMetadata"] = {self.provider: {SIGNATURE_FIELD: sig}}
        self.run.close_text()
        self.run.close_reasoning()
        self.run.custom("reasoning-file" if thought else "file", value)

    # -- citations ------------------------------------------------------------------------
    def _citations(self, candidate: dict[str, Any]) -> None:
        grounding = candidate.get("groundingMetadata")
        if isinstance(grounding, dict) and grounding:
            self._grounding = grounding
            for chunk in self.arr(grounding.get("groundingChunks"), "groundingChunks"):
                if isinstance(chunk, dict):
                    self._grounding_chunk(chunk)
        url_context = candidate.get("urlContextMetadata")
        if isinstance(url_context, dict) and url_context:
            self._url_context = url_context
            for meta in self.arr(url_context.get("urlMetadata"), "urlMetadata"):
                if not isinstance(meta, dict):
                    continue
                if meta.get("urlRetrievalStatus") in (None, "URL_RETRIEVAL_STATUS_SUCCESS"):
                    self._url_source(meta.get("retrievedUrl"), None)
        citations = candidate.get("citationMetadata")
        if isinstance(citations, dict):
            listed = citations.get("citationSources") or citations.get("citations")
            for cite in self.arr(listed, "citationMetadata.citationSources"):
                if isinstance(cite, dict):
                    self._url_source(cite.get("uri"), cite.get("title"))

    def _grounding_chunk(self, chunk: dict[str, Any]) -> None:
        for kind in ("web", "maps"):
            if isinstance(chunk.get(kind), dict):
                self._url_source(chunk[kind].get("uri"), chunk[kind].get("title"))
                return
        if isinstance(chunk.get("image"), dict):
            self._url_source(chunk["image"].get("sourceUri"), chunk["image"].get("title"))
            return
        context = chunk.get("retrievedContext")
        if not isinstance(context, dict):
            return
        uri, title = _str(context.get("uri")), _str(context.get("title"))
        if uri and uri.startswith(("http://", "https://")):
            self._url_source(uri, title)
            return
        source_id = uri or (f"{context.get('fileSearchStore') or ''}/{title}" if title else None)
        if source_id is None or source_id in self._sources:
            return
        self._sources.add(source_id)
        filename = uri.rsplit("/", 1)[-1] if uri else None
        suffix = "." + filename.rsplit(".", 1)[-1].lower() if filename and "." in filename else ""
        value: dict[str, Any] = {
            "sourceType": "document",
            "sourceId": source_id,
            "mediaType": _DOC_TYPES.get(suffix, "application/octet-stream"),
            "title": title or filename or "Unknown Document",
        }
        if filename:
            value["filename"] = filename
        self.run.source(value)

    def _url_source(self, url: Any, title: Any) -> None:
        url = _str(url)
        if url is None or url in self._sources:
            return
        self._sources.add(url)
        value: dict[str, Any] = {"sourceType": "url", "sourceId": url, "url": url}
        if _str(title):
            value["title"] = title
        self.run.source(value)

    # -- end of stream --------------------------------------------------------------------
    def _token_usage(self) -> TokenUsage | None:
        u = self._usage
        if not u:
            return None

        def count(key: str) -> int | None:
            v = u.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) else None

        prompt, tool_prompt = count("promptTokenCount"), count("toolUsePromptTokenCount")
        candidates, thoughts = count("candidatesTokenCount"), count("thoughtsTokenCount")
        has_input = prompt is not None or tool_prompt is not None
        has_output = candidates is not None or thoughts is not None
        return self.run.usage(
            input_tokens=(prompt or 0) + (tool_prompt or 0) if has_input else None,
            output_tokens=(candidates or 0) + (thoughts or 0) if has_output else None,
            total_tokens=count("totalTokenCount"),
            reasoning_tokens=thoughts,
            cached_input_tokens=count("cachedContentTokenCount"),
        )

    def finalize(self) -> None:
        usage = self._token_usage()
        if self._finish is None:
            self.run.fail("UPSTREAM_TRUNCATED", "stream ended without a finishReason", usage=usage)
            return
        reason, canonical = self._finish
        if reason in ERROR_FINISH_REASONS:
            message = self._finish_meta.get("finishMessage") or f"Gemini finished with {reason}"
            self.run.fail(reason, str(message), usage=usage)
            return
        for call in list(self._streaming):
            self._close_call(call)
        metadata = dict(self._finish_meta)
        if self._grounding:
            metadata["groundingMetadata"] = self._grounding
        if self._url_context:
            metadata["urlContextMetadata"] = self._url_context
        self.run.finish(
            finish_reason=canonical,
            provider_finish_reason=reason,
            usage=usage,
            metadata=metadata or None,
        )
