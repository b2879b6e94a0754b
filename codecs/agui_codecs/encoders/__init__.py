"""Encoders: AG-UI 1.0 events → client bytes, behind one contract (:class:`Encoder`)."""

from __future__ import annotations

from .agui import AguiEncoder
from .ai_sdk import AiSdkEncoder
from .base import Encoder, WireEvent

__all__ = ["AguiEncoder", "AiSdkEncoder", "Encoder", "WireEvent"]
