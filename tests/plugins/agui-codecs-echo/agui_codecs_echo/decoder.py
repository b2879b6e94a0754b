"""Decoder of "echo lines" (see the package docstring): bytes in, AG-UI events out."""

from __future__ import annotations

from typing import ClassVar

from agui_codecs.errors import MalformedUpstreamError
from agui_codecs.framing import Frame
from agui_codecs.protocols import StreamDecoder

__all__ = ["EchoDecoder", "SignedEchoDecoder"]

_REASONS = {"stop": "stop", "length": "length"}


class EchoDecoder(StreamDecoder):
    """One echo stream -> one AG-UI run (text only)."""

    name: ClassVar[str] = "echo"
    provider: ClassVar[str] = "echo"

    def handle(self, frame: Frame) -> None:
        line = self.obj(frame.data, "echo line")
        kind = line.get("echo")
        if kind == "start":
            self.run.start(upstream_id=line.get("id") or None, model=line.get("model") or None)
        elif kind == "text":
            text = line.get("text")
            if not isinstance(text, str):
                raise MalformedUpstreamError("echo text line without a string 'text'")
            self.run.text(text)
        elif kind == "done":
            reason = str(line.get("reason") or "stop")
            self.run.finish(
                finish_reason=_REASONS.get(reason, "other"), provider_finish_reason=reason
            )
        elif kind == "error":
            self.run.start()
            self.run.fail(str(line.get("code") or "UPSTREAM_ERROR"), str(line.get("message")))
        else:
            raise MalformedUpstreamError(f"unknown echo line kind {kind!r}")

    def finalize(self) -> None:
        self.run.fail("UPSTREAM_TRUNCATED", "echo stream ended before its done line")


class SignedEchoDecoder(EchoDecoder):
    """The same stream, under the ``echo-signed`` protocol."""

    name: ClassVar[str] = "echo-signed"
