"""The demo upstream is mounted only when it serves (issue 10 §6): for a route whose
``upstream_url`` is ``self:`` into ``/demo/openai`` (the embedded default routes), or with
``GATEWAY_DEMO=1``; with a routes file that does not use it, its path is a 404 like any
unknown path."""

from __future__ import annotations

from pathlib import Path

import pytest
from gwtest import drive

from gateway.app import create_app, demo_mounted
from gateway.config import Settings, load_routes

DEMO_PATH = "/demo/openai/v1/chat/completions"
DEMO_BODY = {"model": "demo", "messages": [{"role": "user", "content": "Weather in Oslo?"}]}

NO_SELF_ROUTE = """
[[routes]]
name = "gpt"
upstream_url = "https://openai.test/v1"
protocol = "openai-chat"
model = "gpt-4o-mini"
"""

SELF_ELSEWHERE = """
[[routes]]
name = "chained"
upstream_url = "self:/v1/agui/other"
protocol = "agui"
"""


def routes(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(text, encoding="utf-8")
    return path


async def assert_serves(settings: Settings) -> None:
    reply = await drive(create_app(settings), DEMO_PATH, DEMO_BODY)
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert reply.data()[-1] == "[DONE]"


async def assert_not_mounted(settings: Settings) -> None:
    reply = await drive(create_app(settings), DEMO_PATH, DEMO_BODY)
    assert reply.status == 404
    assert reply.json()["error"]["code"] == "NOT_FOUND"


async def test_the_embedded_routes_mount_it() -> None:
    await assert_serves(Settings(config=None))


async def test_a_routes_file_with_a_self_demo_route_mounts_it(routes_file: Path) -> None:
    await assert_serves(Settings(config=routes_file))  # gwtest's routes have a "demo" route


@pytest.mark.parametrize("text", [NO_SELF_ROUTE, SELF_ELSEWHERE], ids=["no-self", "self-other"])
async def test_a_routes_file_that_does_not_use_it_does_not_mount_it(
    tmp_path: Path, text: str
) -> None:
    await assert_not_mounted(Settings(config=routes(tmp_path, text)))


async def test_gateway_demo_mounts_it_for_any_routes_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_DEMO", "1")
    await assert_serves(Settings(config=routes(tmp_path, NO_SELF_ROUTE)))


@pytest.mark.parametrize(
    ("url", "mounted"),
    [
        ("self:/demo/openai/v1", True),
        ("self:/demo/openai", True),
        ("self:/demo/openai-v2", False),
        ("self:/demo", False),
        ("https://example.test/demo/openai/v1", False),
    ],
)
def test_only_a_self_url_into_the_demo_mount_counts(
    tmp_path: Path, url: str, mounted: bool
) -> None:
    text = (
        f'[[routes]]\nname = "r"\nupstream_url = "{url}"\nprotocol = "openai-chat"\nmodel = "m"\n'
    )
    path = routes(tmp_path, text)
    assert demo_mounted(Settings(config=path), load_routes(path)) is mounted
