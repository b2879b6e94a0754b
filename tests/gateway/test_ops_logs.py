"""Process logs (issue 16 item 1): JSON lines off a terminal, text on one, level and format
settings, one access line per request with its fields at the top level, and every warning of a
run naming its run id, route and upstream host. The records are read back as the handler
wrote them."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import FAST, OPENAI_URL

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, chat_events, run_input, running

from gateway.logs import configure_logging

pytestmark = pytest.mark.timeout(120)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_json_when_not_a_terminal_text_on_one(restore_root: None) -> None:
    piped = io.StringIO()
    configure_logging(stream=piped, environ={})
    logging.getLogger("gateway.test").warning("disk %s", "full")
    [record] = lines(piped)
    assert record["level"] == "WARNING" and record["logger"] == "gateway.test"
    assert record["message"] == "disk full"
    assert record["timestamp"].endswith("Z") and "T" in record["timestamp"]

    tty = Terminal()
    configure_logging(stream=tty, environ={})
    logging.getLogger("gateway.test").warning("disk %s", "full")
    text = tty.getvalue()
    assert " WARNING gateway.test disk full" in text and not text.startswith("{")
    assert piped.getvalue().count("\n") == 1  # the first handler was replaced, not kept


def test_format_and_level_settings(restore_root: None) -> None:
    tty = Terminal()
    configure_logging(
        stream=tty, environ={"GATEWAY_LOG_FORMAT": "json", "GATEWAY_LOG_LEVEL": "warning"}
    )
    logging.getLogger("gateway.test").info("hidden")
    logging.getLogger("gateway.test").error("shown")
    assert [r["message"] for r in lines(tty)] == ["shown"]  # json on a terminal, INFO dropped
    piped = io.StringIO()
    configure_logging(
        stream=piped, environ={"GATEWAY_LOG_FORMAT": "text", "GATEWAY_LOG_LEVEL": "DEBUG"}
    )
    logging.getLogger("gateway.test").debug("details")
    assert "DEBUG gateway.test details" in piped.getvalue()
    with pytest.raises(ValueError, match="GATEWAY_LOG_LEVEL"):
        configure_logging(stream=piped, environ={"GATEWAY_LOG_LEVEL": "LOUD"})
    with pytest.raises(ValueError, match="GATEWAY_LOG_FORMAT"):
        configure_logging(stream=piped, environ={"GATEWAY_LOG_FORMAT": "xml"})


@pytest.fixture
def app_factory(make_app: Any, tmp_path: Path, keys: None) -> Any:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST, **settings)

    return make


async def test_one_access_line_per_request_with_its_fields(
    app_factory: Any, router: respx.MockRouter, restore_root: None
) -> None:
    router.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, content=b"".join(chat_events(text=["hi"])))
    )
    out = io.StringIO()
    configure_logging(stream=out, environ={"GATEWAY_LOG_FORMAT": "json"})
    app = app_factory()
    async with running(app):
        posted = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        health = await call(app, "GET", "/healthz")
    access = [r for r in lines(out) if r["logger"] == "gateway.access"]
    assert [(r["method"], r["path"], r["status"]) for r in access] == [
        ("POST", "/v1/agui/gpt", 200),
        ("GET", "/healthz", 200),
    ]
    stream, probe = access
    assert stream["route"] == "gpt" and stream["run_id"] == "r1" and stream["tenant"] is None
    assert stream["bytes"] == len(posted.body) and probe["bytes"] == len(health.body)
    assert stream["endpoint"] == "/v1/agui/{route}"
    assert isinstance(stream["duration_ms"], float) and stream["duration_ms"] > 0
    assert "route" not in probe and "run_id" not in probe


async def test_warnings_of_a_run_name_its_run_route_and_upstream_host(
    app_factory: Any, router: respx.MockRouter, restore_root: None
) -> None:
    router.post(OPENAI_URL).mock(return_value=httpx.Response(503, text="overloaded"))
    out = io.StringIO()
    configure_logging(stream=out, environ={"GATEWAY_LOG_FORMAT": "json"})
    app = app_factory()
    async with running(app):
        await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
    warnings = [r for r in lines(out) if r["level"] in ("WARNING", "ERROR")]
    assert any("UPSTREAM_HTTP_503" in r["message"] for r in warnings), warnings
    for record in warnings:
        assert record["run_id"] == "r1", record
        assert record["route"] == "gpt", record
        assert record["upstream_host"] == "openai.test", record


async def test_text_lines_carry_the_context_as_key_values(
    app_factory: Any, router: respx.MockRouter, restore_root: None
) -> None:
    router.post(OPENAI_URL).mock(return_value=httpx.Response(503, text="overloaded"))
    out = io.StringIO()
    configure_logging(stream=out, environ={"GATEWAY_LOG_FORMAT": "text"})
    app = app_factory()
    async with running(app):
        await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
    warning = next(line for line in out.getvalue().splitlines() if " WARNING " in line)
    assert (
        "run_id=r1" in warning and "route=gpt" in warning and "upstream_host=openai.test" in warning
    )
