"""Process logging: one handler on the root logger, JSON lines or readable text, with context.

:func:`configure_logging` (``agui-gateway serve`` calls it) installs one stream handler on the
root logger (uvicorn's own loggers propagate to it: ``serve`` gives uvicorn no log config):

* ``GATEWAY_LOG_FORMAT``: ``json`` (one JSON object per line, ``python-json-logger``),
  ``text`` (``2026-12-01T12:00:00.123Z INFO gateway.access GET /healthz 200 ... run_id=...``)
  or ``auto`` (default: JSON when the stream is not a terminal, as in a container; text on
  one);
* ``GATEWAY_LOG_LEVEL``: ``DEBUG``, ``INFO`` (default), ``WARNING``, ``ERROR``.

Every JSON record has ``timestamp`` (RFC 3339, UTC, milliseconds), ``level``, ``logger``,
``message``, and the context of the request or run it was written in: ``run_id``, ``route``,
``upstream_host``, ``tenant`` (present when known; :func:`bind` adds to it). A request's
context is its access record (:mod:`gateway.routes._access`), so what a handler annotates
(route, run id, tenant) is on every line it logs; a run's pump binds its own (run id, route,
upstream host), so a pump's warnings name the run even after its request ended. The access
record (logger ``gateway.access``) puts its fields at the top level: ``method``, ``path``,
``status``, ``duration_ms``, ``bytes``, ``route``, ``run_id``, ``tenant``, ``subject``.
Exceptions are in ``exc_info`` (the formatted traceback).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Mapping, MutableMapping
from contextvars import ContextVar, Token
from typing import IO, Any, Final, Literal

from pythonjsonlogger.json import JsonFormatter

__all__ = [
    "CONTEXT_FIELDS",
    "ContextFilter",
    "GatewayJsonFormatter",
    "GatewayTextFormatter",
    "LogFormat",
    "bind",
    "configure_logging",
    "current_context",
    "reset_context",
    "use_context",
]

LogFormat = Literal["auto", "json", "text"]

CONTEXT_FIELDS: Final[tuple[str, ...]] = ("run_id", "route", "upstream_host", "tenant")
"""Context fields every record carries (``None`` when unknown; left out of JSON then)."""

_CONTEXT: ContextVar[MutableMapping[str, Any] | None] = ContextVar(
    "gateway_log_context", default=None
)
_HANDLER_MARK: Final = "_agui_gateway_handler"


def use_context(fields: MutableMapping[str, Any]) -> Token[MutableMapping[str, Any] | None]:
    """Make ``fields`` the log context of the current task (its later changes show); returns
    the token to reset it with (``_CONTEXT.reset``: see :func:`reset_context`)."""
    return _CONTEXT.set(fields)


def reset_context(token: Token[MutableMapping[str, Any] | None]) -> None:
    """Undo :func:`use_context`."""
    _CONTEXT.reset(token)


def bind(**fields: Any) -> None:
    """Add ``fields`` (e.g. ``upstream_host``) to the current log context."""
    context = _CONTEXT.get()
    if context is None:
        _CONTEXT.set(dict(fields))
    else:
        context.update(fields)


def current_context() -> Mapping[str, Any]:
    """The current log context (empty when none)."""
    return _CONTEXT.get() or {}


class ContextFilter(logging.Filter):
    """Sets :data:`CONTEXT_FIELDS` on every record from the current context (a field the
    record already has, e.g. from ``extra=``, is kept)."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _CONTEXT.get() or {}
        for name in CONTEXT_FIELDS:
            if getattr(record, name, None) is None:
                setattr(record, name, context.get(name))
        return True


def _timestamp(record: logging.LogRecord) -> str:
    seconds = int(record.created)
    millis = int((record.created - seconds) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


class GatewayJsonFormatter(JsonFormatter):
    """One JSON object per record (see the module docstring for the fields)."""

    def __init__(self) -> None:
        super().__init__(json_ensure_ascii=False)

    def add_fields(
        self,
        log_data: dict[str, Any],
        record: logging.LogRecord,
        message_dict: dict[str, Any],
    ) -> None:
        super().add_fields(log_data, record, message_dict)
        access = log_data.pop("access", None)
        log_data.pop("color_message", None)  # uvicorn's ANSI-coloured copy of the message
        ordered: dict[str, Any] = {
            "timestamp": _timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "message": log_data.pop("message", record.getMessage()),
        }
        if isinstance(access, Mapping):
            ordered.update(access)
        for name in CONTEXT_FIELDS:
            value = log_data.pop(name, None)
            if value is not None:
                ordered.setdefault(name, value)
        ordered.update(log_data)
        log_data.clear()
        log_data.update(ordered)


class GatewayTextFormatter(logging.Formatter):
    """``<timestamp> <LEVEL> <logger> <message> [key=value ...]``: the context fields that
    are set, for a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_timestamp(record)} {record.levelname} {record.name} {record.getMessage()}"
        extras = [
            f"{name}={value}"
            for name in CONTEXT_FIELDS
            if (value := getattr(record, name, None)) is not None
        ]
        if extras:
            line += " " + " ".join(extras)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def _resolve_format(fmt: str, stream: IO[str]) -> Literal["json", "text"]:
    fmt = fmt.strip().lower() or "auto"
    if fmt not in ("auto", "json", "text"):
        raise ValueError(f"GATEWAY_LOG_FORMAT must be auto, json or text, got {fmt!r}")
    if fmt == "auto":
        isatty = getattr(stream, "isatty", None)
        return "text" if isatty is not None and isatty() else "json"
    return "json" if fmt == "json" else "text"


def configure_logging(
    *,
    level: str | None = None,
    fmt: str | None = None,
    stream: IO[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> logging.Handler:
    """Install the gateway's handler on the root logger (replacing one installed before).

    Args:
        level: a level name; default ``GATEWAY_LOG_LEVEL``, else ``INFO``.
        fmt: ``auto`` | ``json`` | ``text``; default ``GATEWAY_LOG_FORMAT``, else ``auto``.
        stream: where lines go (default ``sys.stderr``).
        environ: where the variables are read (default ``os.environ``).

    Returns:
        The handler (tests read it; remove it with ``logging.getLogger().removeHandler``).

    Raises:
        ValueError: an unknown level or format (the message names the variable).
    """
    env = os.environ if environ is None else environ
    out = stream if stream is not None else sys.stderr
    level_name = (level or env.get("GATEWAY_LOG_LEVEL") or "INFO").strip().upper()
    if not isinstance(logging.getLevelNamesMapping().get(level_name), int):
        raise ValueError(f"GATEWAY_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR: {level_name!r}")
    kind = _resolve_format(fmt or env.get("GATEWAY_LOG_FORMAT") or "auto", out)
    handler = logging.StreamHandler(out)
    handler.addFilter(ContextFilter())
    handler.setFormatter(GatewayJsonFormatter() if kind == "json" else GatewayTextFormatter())
    setattr(handler, _HANDLER_MARK, True)
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, _HANDLER_MARK, False):
            root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level_name)
    return handler
