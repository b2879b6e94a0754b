"""Fixtures of the gateway tests (helpers live in ``gwtest.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import ROUTES_TOML
from starlette.types import ASGIApp

from gateway.app import create_app
from gateway.config import Settings


@pytest.fixture
def routes_file(tmp_path: Path) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES_TOML, encoding="utf-8")
    return path


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test-openai")
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")


@pytest.fixture
def router() -> respx.MockRouter:
    return respx.MockRouter(assert_all_called=False, assert_all_mocked=True)


@pytest.fixture
def make_app(routes_file: Path, router: respx.MockRouter) -> Callable[..., ASGIApp]:
    """Build the app over ``routes_file`` with ``router`` as the upstream (settings kwargs)."""

    def make(**settings: Any) -> ASGIApp:
        client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
        return create_app(Settings(config=routes_file, **settings), http_client=client)

    return make
