"""A third-party protocol works end to end (issue 10): ``tests/plugins/agui-codecs-echo``.

The plugin is a real distribution, installed by the suite (``tests/support/protocol_plugins.py``)
and registered only through its entry points (``agui_codecs.protocols``): nothing in the gateway
or the codecs names it. It is used through ``agui-gateway translate`` (a subprocess), through
routes on both streaming endpoints (a respx upstream), through route validation, and, with
``echo-signed``, through the spec's ``sign`` hook, which the upstream must call with the exact
body bytes. Expected outputs follow the echo protocol's definition (the plugin's docstring) and
the conformance kit judges each client stream.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import CHAT_REQUEST, RUN_INPUT, drive
from protocol_plugins import STATE, subprocess_env

from agui_codecs import DECODERS, get_protocol
from conformance import check_bytes
from gateway.app import create_app
from gateway.config import Settings, load_routes
from gateway.errors import ConfigError

ECHO_BASE = "https://echo.test/v1"
ECHO_URL = f"{ECHO_BASE}/echo"

ROUTES = f"""
[[routes]]
name = "echo"
upstream_url = "{ECHO_BASE}"
protocol = "echo"
model = "echo-1"
params = {{ temperature = 0.1 }}

[[routes]]
name = "signed"
upstream_url = "{ECHO_BASE}"
protocol = "echo-signed"
model = "echo-1"
"""


@pytest.fixture(scope="module", autouse=True)
def _plugins_installed() -> None:
    STATE.require()  # fails every test here with the pip output if the install failed


def echo_lines(text: str, *, chunk: int = 3) -> bytes:
    """An echo-lines body answering ``text`` (``start``, ``text`` lines, ``done``)."""
    lines: list[dict[str, Any]] = [{"echo": "start", "id": "e-1", "model": "echo-1"}]
    lines += [{"echo": "text", "text": text[i : i + chunk]} for i in range(0, len(text), chunk)]
    lines.append({"echo": "done", "reason": "stop"})
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def agui_events(body: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: ")]


def answer(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


# -- the registry ------------------------------------------------------------------------------


def test_plugin_protocols_are_registered_by_their_entry_points() -> None:
    import agui_codecs_echo

    assert get_protocol("echo") is agui_codecs_echo.SPEC
    assert get_protocol("echo-signed") is agui_codecs_echo.SIGNED_SPEC
    assert DECODERS["echo"] is agui_codecs_echo.SPEC.decoder
    assert {"openai-chat", "anthropic", "echo", "echo-signed"} <= set(DECODERS)


# -- agui-gateway translate --------------------------------------------------------------------


def translate(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "translate", *args],
        input=stdin, capture_output=True, check=False, timeout=60, env=subprocess_env(),
    )  # fmt: skip


@pytest.mark.parametrize("target", ["agui", "ai-sdk"])
def test_translate_reads_the_plugin_protocol(target: str) -> None:
    proc = translate("--from", "echo", "--to", target, "-", stdin=echo_lines("Hello, plugin"))
    assert proc.returncode == 0, proc.stderr
    report = check_bytes(proc.stdout, protocol=target)  # type: ignore[arg-type]
    assert not report.rejected, report.errors
    if target == "agui":
        events = agui_events(proc.stdout)
        assert [e["type"] for e in events] == [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            *["TEXT_MESSAGE_CONTENT"] * 5,
            "TEXT_MESSAGE_END",
            "RUN_FINISHED",
        ]
        assert answer(events) == "Hello, plugin"
        assert events[-1]["metadata"]["provider"] == "echo"
        assert events[-1]["metadata"]["finishReason"] == "stop"
    else:
        assert proc.stdout.endswith(b"data: [DONE]\n\n")


def test_translate_lists_the_plugin_and_reports_its_faults() -> None:
    help_text = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "translate", "--help"],
        capture_output=True, text=True, check=False, timeout=60, env=subprocess_env(),
    ).stdout  # fmt: skip
    assert "echo-signed" in help_text
    lines = echo_lines("hi").splitlines(keepends=True)
    bad = b"".join(lines[:-1]) + b'{"echo": "sing"}\n' + lines[-1]  # before ``done``
    proc = translate("--from", "echo", "--to", "agui", "-", stdin=bad)
    assert proc.returncode == 1
    assert b"is not a valid echo stream: UPSTREAM_MALFORMED" in proc.stderr
    assert agui_events(proc.stdout)[-1]["type"] == "RUN_ERROR"


# -- routes ------------------------------------------------------------------------------------


@pytest.fixture
def routes_file(tmp_path: Path) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    return path


def make_app(routes_file: Path, router: respx.MockRouter) -> Any:
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    return create_app(Settings(config=routes_file), http_client=client)


def echo_upstream(request: httpx.Request) -> httpx.Response:
    """The upstream of the echo protocol: answers with what it was asked to say."""
    return httpx.Response(200, content=echo_lines(orjson.loads(request.content)["say"]))


async def test_route_on_both_endpoints(routes_file: Path, router: respx.MockRouter) -> None:
    upstream = router.post(ECHO_URL).mock(side_effect=echo_upstream)
    result = await drive(make_app(routes_file, router), "/v1/agui/echo", RUN_INPUT)
    assert result.status == 200
    events = result.data()
    assert [events[0]["type"], events[-1]["type"]] == ["RUN_STARTED", "RUN_FINISHED"]
    assert answer(events) == "hi"
    assert not check_bytes(result.body, protocol="agui").rejected
    request = upstream.calls.last.request
    assert request.headers["x-echo-version"] == "1"  # the spec's default header
    assert request.headers["accept"] == "text/event-stream"
    assert orjson.loads(request.content) == {"model": "echo-1", "say": "hi", "temperature": 0.1}

    result = await drive(make_app(routes_file, router), "/v1/ai-sdk/echo", CHAT_REQUEST)
    assert result.status == 200
    chunks = result.data()
    assert chunks[-1] == "[DONE]"
    deltas = [c["delta"] for c in chunks[:-1] if c["type"] == "text-delta"]
    assert "".join(deltas) == "hi"
    assert not check_bytes(result.body, protocol="ai-sdk").rejected
    assert orjson.loads(upstream.calls.last.request.content)["say"] == "hi"


async def test_plugin_translation_error_is_a_422(
    routes_file: Path, router: respx.MockRouter
) -> None:
    upstream = router.post(ECHO_URL).mock(side_effect=echo_upstream)
    silent = {**RUN_INPUT, "messages": [{"id": "m1", "role": "user", "content": ""}]}
    result = await drive(make_app(routes_file, router), "/v1/agui/echo", silent)
    assert result.status == 422
    assert orjson.loads(result.body) == {
        "error": {"code": "UNSUPPORTED_CONTENT", "message": "echo needs a user message with text"}
    }
    assert not upstream.called


async def test_sign_hook_signs_the_exact_body_sent(
    routes_file: Path, router: respx.MockRouter
) -> None:
    from agui_codecs_echo.request import signature

    def verifying(request: httpx.Request) -> httpx.Response:
        expected = signature("POST", str(request.url), request.content)
        if request.headers.get("x-echo-signature") != expected:
            return httpx.Response(401, json={"error": {"code": "bad_signature", "message": "no"}})
        return echo_upstream(request)

    upstream = router.post(ECHO_URL).mock(side_effect=verifying)
    for path, body in (("/v1/agui/signed", RUN_INPUT), ("/v1/ai-sdk/signed", CHAT_REQUEST)):
        result = await drive(make_app(routes_file, router), path, body)
        assert result.status == 200
        assert b"bad_signature" not in result.body
        assert b'"hi"' in result.body
        request = upstream.calls.last.request
        assert request.headers["content-type"] == "application/json"
        assert request.headers["x-echo-version"] == "1"  # the hook got the headers to sign
        assert orjson.loads(request.content) == {"model": "echo-1", "say": "hi"}
    assert upstream.call_count == 2


# -- route validation --------------------------------------------------------------------------


def config_error(tmp_path: Path, route: str) -> str:
    path = tmp_path / "bad.toml"
    path.write_text(f'[[routes]]\nname = "x"\n{route}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_routes(path)
    return info.value.message


def test_unknown_protocol_lists_every_registered_one(tmp_path: Path) -> None:
    message = config_error(tmp_path, 'upstream_url = "https://h/v1"\nprotocol = "bedrock"')
    assert "route 'x': field 'protocol'" in message
    assert "unknown protocol 'bedrock'" in message
    for name in ("agui", "ai-sdk", "anthropic", "echo", "echo-signed", "gemini", "openai-chat"):
        assert name in message


def test_plugin_spec_drives_route_checks(tmp_path: Path) -> None:
    message = config_error(tmp_path, f'upstream_url = "{ECHO_URL}"\nprotocol = "echo"\nmodel = "m"')
    assert "appends '/echo' itself" in message and f"use the base URL {ECHO_BASE!r}" in message
    message = config_error(tmp_path, f'upstream_url = "{ECHO_BASE}"\nprotocol = "echo"')
    assert "field 'model': Field required" in message  # spec.requires_model
