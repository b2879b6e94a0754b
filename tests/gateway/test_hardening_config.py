"""Route files with mistakes a user trial made fail at start-up with an error naming the route
and the field (and never echoing a pasted key): bad hosts and ports, an endpoint URL where a
base URL belongs, headers the HTTP client owns, a key in ``auth.env``; a query on
``upstream_url`` (Azure's ``api-version``) is kept behind the appended path; ``ai_sdk_major``
takes 5, 6 or 7. The start-up banner aims the demo curl line only at a ``demo`` route."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import drive

from gateway.app import create_app
from gateway.config import Settings, load_routes
from gateway.errors import ConfigError
from gateway.server import banner, build_server

RUN_INPUT: dict[str, Any] = {
    "threadId": "t1",
    "runId": "r1",
    "messages": [{"id": "m1", "role": "user", "content": "hi"}],
    "tools": [],
    "context": [],
    "state": None,
    "forwardedProps": {},
}


def route_file(tmp_path: Path, body: str, name: str = "x") -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(f'[[routes]]\nname = "{name}"\n{body}\n', encoding="utf-8")
    return path


def config_error(tmp_path: Path, body: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_routes(route_file(tmp_path, body))
    return info.value.message


OPENAI = 'protocol = "openai-chat"\nmodel = "m"\n'


# -- upstream_url --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://example.com:99999/v1", "port is not a number in 1-65535"),
        ("http://example.com:0/v1", "port is not a number in 1-65535"),
        ("http://example.com:http/v1", "port is not a number in 1-65535"),
        ("http://exa mple.com/v1", "contains spaces"),
        ("http://exa\tmple.com/v1", "contains spaces"),
        ("http://exa<mple.com/v1", "host contains characters"),
        ("http://:8080/v1", "has no host"),
        ("https://api.openai.com/v1#frag", "#fragment"),
    ],
)
def test_bad_host_or_port_names_route_and_field(tmp_path: Path, url: str, problem: str) -> None:
    message = config_error(tmp_path, f'upstream_url = "{url}"\n{OPENAI}')
    assert "route 'x': field 'upstream_url'" in message
    assert problem in message


@pytest.mark.parametrize(
    ("protocol", "url", "base"),
    [
        ("openai-chat", "https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1"),
        ("openai-chat", "https://api.groq.com/openai/v1/chat/completions/", "https://api.groq.com/openai/v1"),
        ("anthropic", "https://api.anthropic.com/v1/messages", "https://api.anthropic.com/v1"),
        ("openai-responses", "https://api.openai.com/v1/responses", "https://api.openai.com/v1"),
        (
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            "https://generativelanguage.googleapis.com/v1beta",
        ),
        (
            "openai-chat",
            "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
            "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
        ),
    ],
)  # fmt: skip
def test_endpoint_url_instead_of_base_url_suggests_the_base(
    tmp_path: Path, protocol: str, url: str, base: str
) -> None:
    message = config_error(
        tmp_path, f'upstream_url = "{url}"\nprotocol = "{protocol}"\nmodel = "m"'
    )
    assert "route 'x': field 'upstream_url'" in message
    assert f"use the base URL {base!r}" in message


def test_passthrough_url_is_the_endpoint_itself(tmp_path: Path) -> None:
    routes = load_routes(
        route_file(
            tmp_path, 'upstream_url = "https://app.test/api/chat/completions"\nprotocol = "ai-sdk"'
        )
    )
    assert routes["x"].upstream_url == "https://app.test/api/chat/completions"


async def test_azure_query_is_kept_behind_the_appended_path(
    tmp_path: Path, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_AZURE_KEY", "azure-key")
    path = tmp_path / "routes.toml"
    path.write_text(
        """
[[routes]]
name = "azure"
upstream_url = "https://res.openai.azure.com/openai/deployments/gpt4o/?api-version=2024-10-21"
protocol = "openai-chat"
model = "gpt-4o"
auth = { type = "header", header = "api-key", env = "TEST_AZURE_KEY" }

[[routes]]
name = "gem"
upstream_url = "https://gemini.test/v1beta?tenant=a"
protocol = "gemini"
model = "gemini-2.5-flash"
""",
        encoding="utf-8",
    )
    seen = router.route().mock(return_value=httpx.Response(200, content=b""))
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    app = create_app(Settings(config=path), http_client=client)
    await drive(app, "/v1/agui/azure", RUN_INPUT)
    await drive(app, "/v1/agui/gem", RUN_INPUT)
    azure, gemini = (c.request for c in seen.calls)
    assert str(azure.url) == (
        "https://res.openai.azure.com/openai/deployments/gpt4o/chat/completions"
        "?api-version=2024-10-21"
    )
    assert azure.headers["api-key"] == "azure-key"
    assert str(gemini.url) == (
        "https://gemini.test/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&tenant=a"
    )


# -- headers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header", ["host", "Content-Length", "transfer-encoding", "Connection", "upgrade"]
)
def test_headers_the_http_client_owns_cannot_be_set(tmp_path: Path, header: str) -> None:
    body = f'upstream_url = "https://h.test/v1"\n{OPENAI}headers = {{ "{header}" = "v" }}'
    message = config_error(tmp_path, body)
    assert "route 'x': field 'headers'" in message and "cannot be overridden" in message


def test_auth_header_cannot_be_a_reserved_header(tmp_path: Path) -> None:
    body = f'upstream_url = "https://h.test/v1"\n{OPENAI}auth = {{ type = "header", header = "Host", env = "K" }}'
    message = config_error(tmp_path, body)
    assert "route 'x': field 'auth.header'" in message


# -- auth.env ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "sk-proj-AbCdEf0123456789",
        "sk_live_51HqLyjWDarjtT1zdp7dc",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "gsk_abcdefghijklmnop",
        "A" * 65,
        "Zx81kQmP0vLr7TnB4sYc2WdE9hJ",
        "my key",
        "OPENAI-API-KEY",
        "1OPENAI",
    ],
)
def test_auth_env_that_is_not_a_variable_name_is_refused_without_echo(
    tmp_path: Path, value: str
) -> None:
    body = (
        f'upstream_url = "https://h.test/v1"\n{OPENAI}auth = {{ type = "bearer", env = "{value}" }}'
    )
    message = config_error(tmp_path, body)
    assert "route 'x': field 'auth.env'" in message
    assert "NAME of the environment variable" in message
    assert value not in message


@pytest.mark.parametrize("value", ["OPENAI_API_KEY", "_KEY", "my_token_2", "A" * 64])
def test_auth_env_variable_names_load(tmp_path: Path, value: str) -> None:
    body = (
        f'upstream_url = "https://h.test/v1"\n{OPENAI}auth = {{ type = "bearer", env = "{value}" }}'
    )
    assert load_routes(route_file(tmp_path, body))["x"].auth.env == value


# -- ai_sdk_major --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"), [("", None), ("ai_sdk_major = 5", 5), ("ai_sdk_major = 7", 7)]
)
def test_ai_sdk_major_loads(tmp_path: Path, value: str, expected: int | None) -> None:
    body = f'upstream_url = "https://h.test/v1"\n{OPENAI}{value}'
    assert load_routes(route_file(tmp_path, body))["x"].ai_sdk_major == expected


@pytest.mark.parametrize("value", ["4", "8", '"6"', "6.5"])
def test_ai_sdk_major_other_than_5_6_7_is_a_config_error(tmp_path: Path, value: str) -> None:
    message = config_error(
        tmp_path, f'upstream_url = "https://h.test/v1"\n{OPENAI}ai_sdk_major = {value}'
    )
    assert "route 'x': field 'ai_sdk_major'" in message


# -- start-up banner -----------------------------------------------------------------------


def test_banner_with_a_demo_route_prints_the_demo_curl_line() -> None:
    lines = banner("0.0.0.0", 8811, load_routes(None))
    assert lines[0] == "Try the demo route:"
    assert lines[1].startswith("curl -N -X POST http://127.0.0.1:8811/v1/agui/demo ")


def test_banner_without_a_demo_route_lists_routes_and_endpoints(tmp_path: Path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text(
        '[[routes]]\nname = "gpt"\nupstream_url = "https://h.test/v1"\nprotocol = "openai-chat"\n'
        'model = "m"\n\n[[routes]]\nname = "agent"\nupstream_url = "https://a.test/run"\n'
        'protocol = "agui"\n',
        encoding="utf-8",
    )
    out = io.StringIO()
    server = build_server(
        create_app(Settings(config=path)), "127.0.0.1", 0, out=out, log_level="warning"
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while server.bound_port is None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    server.should_exit = True
    thread.join(30)
    assert server.bound_port is not None
    base = f"http://127.0.0.1:{server.bound_port}"
    text = out.getvalue()
    assert "demo" not in text.lower() and "Weather" not in text
    assert f"Serving 2 routes on {base}:" in text
    assert f"gpt (openai-chat): POST {base}/v1/agui/gpt  |  POST {base}/v1/ai-sdk/gpt" in text
    assert f"agent (agui): POST {base}/v1/agui/agent" in text
