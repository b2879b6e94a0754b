"""Routes file and GATEWAY_* settings: valid files load, bad ones name the route and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gateway.app import create_app
from gateway.config import Settings, load_routes
from gateway.errors import ConfigError
from gateway.server import serve

GOOD = """
[[routes]]
name = "gpt"
upstream_url = "https://api.openai.com/v1/"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = { type = "bearer", env = "OPENAI_API_KEY" }
headers = { "OpenAI-Organization" = "org-1" }
params = { temperature = 0.2 }
timeouts = { connect = 5, read = 60 }

[[routes]]
name = "claude"
upstream_url = "https://api.anthropic.com/v1"
protocol = "anthropic"
model = "claude-sonnet-4-5"
auth = { type = "header", header = "x-api-key", env = "ANTHROPIC_API_KEY" }
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_embedded_default_has_the_demo_route_in_process() -> None:
    routes = load_routes(None)
    assert list(routes) == ["demo"]
    demo = routes["demo"]
    assert demo.upstream_url == "self:/demo/openai/v1"
    assert demo.protocol == "openai-chat"
    assert demo.auth.type == "none"


def test_good_file_loads_with_defaults(tmp_path: Path) -> None:
    routes = load_routes(write(tmp_path, GOOD))
    gpt, claude = routes["gpt"], routes["claude"]
    assert gpt.upstream_url == "https://api.openai.com/v1"  # trailing slash dropped
    assert gpt.timeouts.connect == 5 and gpt.timeouts.read == 60 and gpt.timeouts.pool == 10
    assert gpt.params == {"temperature": 0.2}
    assert claude.auth.header == "x-api-key"


def test_missing_key_variable_is_not_a_startup_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "gpt" in load_routes(write(tmp_path, GOOD))


@pytest.mark.parametrize(
    ("route", "expected"),
    [
        (
            'name = "x"\nupstream_url = "https://h/v1"\nprotocol = "openai-chat"',
            "route 'x': field 'model': Field required",
        ),
        (
            'name = "x"\nupstream_url = "https://h/v1"\nprotocol = "bedrock"\nmodel = "m"',
            "route 'x': field 'protocol'",
        ),
        (
            'name = "x"\nupstream_url = "ftp://h/v1"\nprotocol = "openai-chat"\nmodel = "m"',
            "route 'x': field 'upstream_url'",
        ),
        (
            'name = "x"\nupstream_url = "https://h"\nprotocol = "openai-chat"\nmodel = "m"\n'
            'auth = { type = "bearer" }',
            "route 'x': field 'auth': Value error, auth type 'bearer' needs 'env'",
        ),
        (
            'name = "x"\nupstream_url = "https://h"\nprotocol = "openai-chat"\nmodel = "m"\n'
            'auth = { type = "header", env = "K" }',
            "route 'x': field 'auth'",
        ),
        (
            'name = "x"\nupstream_url = "https://h"\nprotocol = "openai-chat"\nmodle = "m"',
            "route 'x': field 'modle': Extra inputs are not permitted",
        ),
        (
            'name = "x y"\nupstream_url = "https://h"\nprotocol = "openai-chat"\nmodel = "m"',
            "route 'x y': field 'name'",
        ),
        (
            'upstream_url = "https://h"\nprotocol = "openai-chat"\nmodel = "m"',
            "route #1: field 'name': Field required",
        ),
        (
            'name = "x"\nupstream_url = "https://h"\nprotocol = "openai-chat"\nmodel = "m"\n'
            "timeouts = { read = 0 }",
            "route 'x': field 'timeouts.read'",
        ),
    ],
)
def test_bad_route_names_route_and_field(tmp_path: Path, route: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_routes(write(tmp_path, f"[[routes]]\n{route}\n"))
    assert expected in info.value.message
    assert str(tmp_path / "routes.toml") in info.value.message


def test_duplicate_names(tmp_path: Path) -> None:
    one = '[[routes]]\nname = "x"\nupstream_url = "https://h"\nprotocol = "openai-chat"\nmodel = "m"\n'
    with pytest.raises(ConfigError, match="route 'x': field 'name': duplicate route name"):
        load_routes(write(tmp_path, one + one))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[routes]\n", "invalid TOML"),
        ("", "no routes"),
        ("[server]\nport = 1\n", "unknown top-level keys ['server']"),
    ],
)
def test_bad_files(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        load_routes(write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="routes file not found"):
        load_routes(tmp_path / "nope.toml")


def test_settings_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, GOOD)
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    monkeypatch.setenv("GATEWAY_KEEPALIVE_SECONDS", "2.5")
    monkeypatch.setenv("GATEWAY_MAX_EVENT_SIZE", "1024")
    monkeypatch.setenv("GATEWAY_MAX_REQUEST_BYTES", "2048")
    settings = Settings()
    assert settings.config == path
    assert settings.keepalive_seconds == 2.5
    assert settings.max_event_size == 1024
    assert settings.max_request_bytes == 2048
    assert set(settings.load_routes()) == {"gpt", "claude"}


def test_settings_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "KEEPALIVE_SECONDS", "MAX_EVENT_SIZE", "MAX_REQUEST_BYTES"):
        monkeypatch.delenv(f"GATEWAY_{name}", raising=False)
    settings = Settings()
    assert settings.config is None
    assert settings.keepalive_seconds == 15
    assert settings.max_event_size == 8 * 1024 * 1024


def test_bad_setting_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_KEEPALIVE_SECONDS", "0")
    with pytest.raises(ValidationError):
        Settings()


def test_create_app_fails_at_startup_on_a_bad_file(tmp_path: Path) -> None:
    path = write(
        tmp_path, '[[routes]]\nname = "x"\nupstream_url = "https://h"\nprotocol = "openai-chat"\n'
    )
    with pytest.raises(ConfigError, match="route 'x': field 'model'"):
        create_app(Settings(config=path))


def test_serve_exits_with_a_clear_message_on_a_bad_file(tmp_path: Path) -> None:
    path = write(
        tmp_path, '[[routes]]\nname = "x"\nupstream_url = "https://h"\nprotocol = "openai-chat"\n'
    )
    with pytest.raises(SystemExit) as info:
        serve(str(path), "127.0.0.1", 0)
    assert "invalid configuration" in str(info.value.code)
    assert "route 'x': field 'model'" in str(info.value.code)
