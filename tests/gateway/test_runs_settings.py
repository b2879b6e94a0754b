"""Durable-run settings (``GATEWAY_*``): defaults, the run-core settings they build, and the
start-up refusals (a bad value stops ``serve`` with a message naming the variable, never
echoing a URL that may hold a password)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gateway.broker import DEFAULT_PREFIX
from gateway.config import Settings
from gateway.runs import RunSettings
from gateway.server import serve
from gateway.store import DEFAULT_DATABASE_URL

ENV = {
    "GATEWAY_DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/test",
    "GATEWAY_DATABASE_SCHEMA": "tenant_1",
    "GATEWAY_REDIS_URL": "redis://127.0.0.1:6379/0",
    "GATEWAY_REDIS_PREFIX": "gw:",
    "GATEWAY_RETENTION_SECONDS": "3600",
    "GATEWAY_HEARTBEAT_INTERVAL": "0.5",
    "GATEWAY_LEASE_TIMEOUT": "2",
    "GATEWAY_REAPER_INTERVAL": "0.25",
    "GATEWAY_BATCH_INTERVAL": "0.05",
    "GATEWAY_BATCH_MAX_EVENTS": "16",
    "GATEWAY_READER_RECHECK": "0.2",
    "GATEWAY_ON_DISCONNECT": "cancel",
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def test_defaults_are_embedded_single_replica_and_continue() -> None:
    settings = Settings()
    assert settings.database_url == DEFAULT_DATABASE_URL  # a SQLite file, no server
    assert settings.database_schema is None
    assert settings.redis_url is None  # in-process broker
    assert settings.redis_prefix == DEFAULT_PREFIX
    assert settings.on_disconnect == "continue"
    assert settings.run_settings() == RunSettings()  # the run core's own defaults


def test_environment_reaches_the_run_core(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.database_url == ENV["GATEWAY_DATABASE_URL"]
    assert settings.database_schema == "tenant_1"
    assert settings.redis_url == ENV["GATEWAY_REDIS_URL"]
    assert settings.redis_prefix == "gw:"
    assert settings.on_disconnect == "cancel"
    assert settings.run_settings() == RunSettings(
        batch_interval=0.05,
        batch_max_events=16,
        heartbeat_interval=0.5,
        lease_timeout=2.0,
        reaper_interval=0.25,
        reader_idle_recheck=0.2,
        retention=3600.0,
    )


def test_an_empty_redis_url_means_the_in_process_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_REDIS_URL", "")
    assert Settings().redis_url is None


@pytest.mark.parametrize(
    ("env", "variable", "fragment"),
    [
        ({"GATEWAY_DATABASE_URL": "mysql://u:secret@db/x"}, "GATEWAY_DATABASE_URL", "mysql"),
        ({"GATEWAY_REDIS_URL": "http://u:secret@cache"}, "GATEWAY_REDIS_URL", "redis://"),
        ({"GATEWAY_DATABASE_SCHEMA": "a-b"}, "GATEWAY_DATABASE_SCHEMA", "identifier"),
        ({"GATEWAY_DATABASE_SCHEMA": "tenant"}, "GATEWAY_*", "PostgreSQL"),
        ({"GATEWAY_LEASE_TIMEOUT": "1"}, "GATEWAY_*", "heartbeat_interval"),
        ({"GATEWAY_ON_DISCONNECT": "drop"}, "GATEWAY_ON_DISCONNECT", "continue"),
        ({"GATEWAY_BATCH_MAX_EVENTS": "0"}, "GATEWAY_BATCH_MAX_EVENTS", "greater"),
        ({"GATEWAY_RETENTION_SECONDS": "-1"}, "GATEWAY_RETENTION_SECONDS", "greater"),
    ],
)
def test_bad_settings_stop_serve_naming_the_variable_not_its_value(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    env: dict[str, str],
    variable: str,
    fragment: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as info:
        serve(None, "127.0.0.1", 0)
    message = str(info.value.code)
    assert message.startswith("agui-gateway: invalid GATEWAY_* setting:")
    assert f"{variable}:" in message and fragment in message
    assert "secret" not in message


def test_httptools_asked_for_but_not_importable_stops_serve_with_a_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No traceback: ``GATEWAY_HTTP_PROTOCOL=httptools`` where httptools cannot be imported
    (a broken install, PyPy) stops ``serve`` with the variable and what to do."""
    monkeypatch.setenv("GATEWAY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("GATEWAY_HTTP_PROTOCOL", "httptools")
    monkeypatch.setitem(sys.modules, "httptools", None)  # import httptools -> ImportError
    monkeypatch.delitem(sys.modules, "gateway.http_httptools", raising=False)
    monkeypatch.delitem(sys.modules, "uvicorn.protocols.http.httptools_impl", raising=False)
    with pytest.raises(SystemExit) as info:
        serve(None, "127.0.0.1", 0)
    message = str(info.value.code)
    assert message.startswith("agui-gateway: invalid GATEWAY_* setting:")
    assert "GATEWAY_HTTP_PROTOCOL: httptools needs the httptools package" in message
    assert "set h11" in message
