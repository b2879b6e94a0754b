"""Tool call arguments carried by other AG-UI events (a raw event, a result, a snapshot).

The ``agui`` normalizer sends one TOOL_CALL_ARGS (``tool-args-synthesized``) for a call that was
opened and ended with no arguments when another event of the run carries them
(:class:`~agui_codecs.protocols.agui._normalizer.AguiNormalizer`).
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["args_in"]

_ARG_KEYS = ("args", "arguments", "input", "toolCallArgs", "tool_call_args")


def _arg_text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, dict):
        return orjson.dumps(value).decode()
    return None


def args_in(obj: Any, call_id: str, depth: int = 0) -> str | None:
    """Arguments of tool call ``call_id`` carried by a raw event, a result or a snapshot, as
    JSON text: a nested tool call object with that id (``{id, function: {arguments}}`` as in
    AG-UI messages, ``{id, args}`` as in LangChain), or ``args`` / ``arguments`` / ``input`` /
    ``function.arguments`` at the top of the payload itself; None when there are none."""
    if depth > 8:
        return None
    if isinstance(obj, list):
        return next((a for o in obj if (a := args_in(o, call_id, depth + 1)) is not None), None)
    if not isinstance(obj, dict):
        return None
    own = obj.get("id")
    if own == call_id or (depth == 0 and own is None):
        function = obj.get("function")
        if isinstance(function, dict) and (text := _arg_text(function.get("arguments"))):
            return text
        for key in _ARG_KEYS:
            if (text := _arg_text(obj.get(key))) is not None:
                return text
    return next(
        (a for v in obj.values() if (a := args_in(v, call_id, depth + 1)) is not None), None
    )
