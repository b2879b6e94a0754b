"""Request builder and body signer of "echo lines" (see the package docstring)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from ag_ui.core import TextPart, UserMessage

from agui_codecs.errors import RequestTranslationError
from agui_codecs.protocols import ClientRequest, check_conversation

__all__ = ["SIGNING_KEY", "build_request", "sign", "signature"]

SIGNING_KEY = b"echo-test-key"
"""The shared secret of ``echo-signed`` (a test plugin: a real one reads its credentials)."""


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """``{"model", "say": <the last user message's text>, **params}``.

    Raises:
        InvalidInputError: no conversation (``check_conversation``).
        RequestTranslationError: the last user message has no text (``UNSUPPORTED_CONTENT``).
    """
    check_conversation(request.run_input)
    users = [m for m in request.run_input.messages if isinstance(m, UserMessage)]
    content = users[-1].content if users else ""
    if isinstance(content, str):
        text = content
    else:
        text = "".join(p.text for p in content if isinstance(p, TextPart))
    if not text:
        raise RequestTranslationError("echo needs a user message with text")
    return {"model": model, "say": text, **params}


def signature(method: str, url: str, body: bytes) -> str:
    """HMAC-SHA256 over ``method``, ``url`` and the SHA-256 of ``body`` (hex)."""
    digest = hashlib.sha256(body).hexdigest()
    message = f"{method}\n{url}\n{digest}".encode()
    return hmac.new(SIGNING_KEY, message, hashlib.sha256).hexdigest()


def sign(method: str, url: str, headers: Mapping[str, str], body: bytes) -> Mapping[str, str]:
    """The ``sign`` hook: ``headers`` plus ``x-echo-signature`` of this exact request."""
    return {**headers, "x-echo-signature": signature(method, url, body)}
