"""Entity identity: every message, reasoning message, tool call and result of a thread gets an
AG-UI id unique in that thread, and the provider's own id stays recoverable from it (issue 11,
kind 1).

Upstream ids are not unique enough: an AI SDK backend reuses ``toolCallId`` in a later step,
an AI SDK continuation starts with the ``messageId`` of the previous assistant message, hosts
reuse ``call_0`` on every turn, a provider id may equal an id minted for another kind. A second
entity must never be merged into or dropped for the first (``@ag-ui/client`` 1.0.0
``defaultApplyEvents`` and ``ai`` 7 ``processUIMessageStream`` both find a tool part or message
by its id, so a repeated id updates the earlier entity).

The rule, in :class:`Identities` (one per :class:`~agui_codecs.builder.RunBuilder`, so per
stream; the ids of the run's input messages are :meth:`~Identities.reserve`\\ d first):

* the first entity with provider id ``p`` keeps ``p`` as its AG-UI id;
* a later entity with the same ``p``, or a ``p`` equal to any id already used in the thread,
  gets the *derived id* ``p~<n>-<check>`` (``n`` = 2, 3, ...; ``check`` = the first 8 hex digits
  of SHA-256 of ``p~<n>``): deterministic (same bytes, same ids, on every replica) and
  reversible without a table: :func:`provider_id` strips the suffix only when its check matches,
  so an id the provider chose itself is never altered (a provider id that happens to end in a
  valid check: probability 2**-32 per id);
* a reference by provider id (a tool result, a signature for a call) is the *latest* entity
  with that provider id (:meth:`Identities.resolve`).

The mapping back is carried by the ids themselves: a client echoes the AG-UI ids in its next
``RunAgentInput`` (or AI SDK chat request), and the built upstream body gets :func:`provider_id`
of each (:func:`provider_body`, applied to every request builder's output), so each provider
gets its own ids back. An
id the gateway's store refuses (over 100 characters, NUL, ...), a derived one included, is
remapped by ``gateway/upstream_ids.py`` to ``up-<32 hex>``; the gateway keeps that mapping per
thread and passes it as ``originals``, which :func:`provider_body` applies first (``up-…`` ->
the provider's id or derived id -> :func:`provider_id`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, TypeVar, cast

import orjson
from ag_ui.core import ActivityMessage, AssistantMessage, Message, ToolMessage

from . import jsontext

__all__ = [
    "Identities",
    "activity_ids",
    "derived_id",
    "message_ids",
    "provider_body",
    "provider_id",
]

_DERIVED: Final = re.compile(r"(?s)(.+)~([2-9]|[1-9][0-9]+)-([0-9a-f]{8})")


def _check(base: str, n: int) -> str:
    text = f"{base}~{n}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()[:8]


def derived_id(base: str, n: int) -> str:
    """The ``n``-th (``n >= 2``) AG-UI id of entities whose provider id is ``base``:
    ``f"{base}~{n}-{check}"`` (module docstring). :func:`provider_id` inverts it."""
    return f"{base}~{n}-{_check(base, n)}"


def provider_id(agui_id: str) -> str:
    """The provider's id behind an AG-UI id: ``base`` of a :func:`derived_id`, else the id
    itself (an id whose suffix check does not match is the provider's own)."""
    match = _DERIVED.fullmatch(agui_id)
    if match is None:
        return agui_id
    base, n, check = match.group(1), int(match.group(2)), match.group(3)
    return base if _check(base, n) == check else agui_id


def message_ids(messages: Iterable[Message]) -> Iterator[str]:
    """Every entity id of a conversation, in order: message ids, the tool-call ids of assistant
    messages and the ``toolCallId`` of tool messages (the ids a new run must not reuse)."""
    for message in messages:
        yield message.id
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls or ():
                yield call.id
        elif isinstance(message, ToolMessage):
            yield message.tool_call_id


def activity_ids(messages: Iterable[Message]) -> Iterator[str]:
    """The ids of a conversation's activity messages (role ``activity``): an
    ACTIVITY_SNAPSHOT naming one updates it (``@ag-ui/client`` 1.0.0), it is no second
    entity."""
    for message in messages:
        if isinstance(message, ActivityMessage):
            yield message.id


class Identities:
    """The ids used in one thread (reserved from its history, then minted by the stream).

    Methods never raise; :meth:`peek` and :meth:`mint` agree, so a caller can build an event
    with :meth:`peek` and commit with :meth:`mint` after it validated.
    """

    __slots__ = ("_latest", "_used")

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._latest: dict[str, str] = {}  # provider id -> AG-UI id of its latest entity

    def reserve(self, ids: Iterable[str]) -> None:
        """Mark ``ids`` (e.g. :func:`message_ids` of the run's input) as taken; a provider id
        among them resolves to the last of them until this stream mints another."""
        for agui_id in ids:
            if isinstance(agui_id, str) and agui_id:
                self._used.add(agui_id)
                self._latest[provider_id(agui_id)] = agui_id

    def is_used(self, agui_id: str) -> bool:
        """True when ``agui_id`` is taken in the thread."""
        return agui_id in self._used

    def peek(self, provider: str) -> str:
        """The AG-UI id :meth:`mint` would give a new entity with provider id ``provider``."""
        if provider not in self._used:
            return provider
        n = 2
        while (candidate := derived_id(provider, n)) in self._used:
            n += 1
        return candidate

    def mint(self, provider: str) -> str:
        """A new entity with provider id ``provider``: its AG-UI id, unique in the thread."""
        agui_id = self.peek(provider)
        self._used.add(agui_id)
        self._latest[provider] = agui_id
        return agui_id

    def resolve(self, provider: str) -> str:
        """The AG-UI id of the latest entity with provider id ``provider`` (a derived id in use
        is returned as it is; an unknown id too: it may name an entity of an earlier turn the
        history did not show)."""
        if provider in self._used and provider_id(provider) != provider:
            return provider
        return self._latest.get(provider, provider)


def _is_id_key(key: object) -> bool:
    return isinstance(key, str) and key.lower().endswith(("id", "ids"))


_NONE: Final[Mapping[str, str]] = {}


def _unmap(value: Any, originals: Mapping[str, str], key: object = None) -> Any:
    """``value`` with every id-named string (key ending ``id`` / ``Id`` / ``_id``, or a list
    under a key ending ``ids`` / ``Ids``) that ``originals`` names replaced by its original,
    then a derived id by its provider id; the same object when nothing changed."""
    if isinstance(value, str):
        if not _is_id_key(key):
            return value
        value = originals.get(value, value)
        return provider_id(value) if "~" in value else value
    if isinstance(value, dict):
        out = {k: _unmap(v, originals, k) for k, v in value.items()}
        return value if all(out[k] is value[k] for k in value) else out
    if isinstance(value, list):
        inner = key if _is_id_key(key) else None
        items = [_unmap(v, originals, inner) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


_Body = TypeVar("_Body")


def _dumps(value: Any) -> bytes:
    """Compact JSON; a lone surrogate (an original id may hold one) as its ``\\uXXXX``
    escape, which orjson cannot write (RFC 8259 §7 admits it)."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson: "str is not valid UTF-8: surrogates not allowed"
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode()


def provider_body(body: _Body, originals: Mapping[str, str] | None = None) -> _Body:
    """An upstream request body with the provider's own ids: every string under a key ending
    in ``id`` (``id``, ``toolCallId``, ``tool_call_id``, ``tool_use_id``, ``toolUseId``,
    ``call_id``, ``messageId``, ... and lists under such keys or ``...Ids`` keys) that
    ``originals`` names becomes its original, and one that is a :func:`derived_id` becomes
    :func:`provider_id` of it. Content (``text``, ``content``, arguments) is never touched.

    Args:
        body: what a request builder returned: a JSON value, or the JSON bytes of a
            passthrough body.
        originals: ``{gateway id: provider id}`` of the thread's remapped ids
            (``ClientRequest.upstream_ids``; the value may itself be a derived id).

    Returns:
        ``body`` itself when it holds no such id (passthrough bytes stay byte for byte),
        else a rewritten copy (bytes re-serialized compactly, a lone surrogate of an original
        id as its ``\\uXXXX`` escape). Bytes that are not JSON are returned as they are.
    """
    originals = originals or _NONE
    if isinstance(body, bytes | bytearray):
        if b"~" not in body and not any(k.encode() in body for k in originals):
            return body
        try:
            value = jsontext.loads(body)
        except ValueError:
            return body
        fixed = _unmap(value, originals)
        return body if fixed is value else cast(_Body, _dumps(fixed))
    return cast(_Body, _unmap(body, originals))
