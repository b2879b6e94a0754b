"""Helpers of the upstream resilience tests (issue 19): apps over a routes file written by the
test, with backoff sleeps recorded instead of waited, and a route the test scripts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import respx
from starlette.types import ASGIApp

from gateway.app import create_app
from gateway.attempts import AttemptRecord
from gateway.config import Settings

__all__ = ["ResilientApp", "agui_sse", "build", "scripted"]


@dataclass
class ResilientApp:
    """An app whose backoff waits are recorded in :attr:`sleeps` (seconds), not slept."""

    app: ASGIApp
    sleeps: list[float] = field(default_factory=list)
    attempts: list[AttemptRecord] = field(default_factory=list)


def build(tmp_path: Path, router: respx.MockRouter, routes_toml: str) -> ResilientApp:
    """The app over ``routes_toml`` with ``router`` as every upstream."""
    path = tmp_path / "routes.toml"
    path.write_text(routes_toml, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    holder = ResilientApp(app=None)  # type: ignore[arg-type]
    app = create_app(Settings(config=path), http_client=client, on_attempt=holder.attempts.append)

    async def sleep(delay: float) -> None:
        holder.sleeps.append(delay)

    app.state.services.pipeline.sleep = sleep
    holder.app = app
    return holder


def scripted(*responses: httpx.Response | Exception) -> Iterator[httpx.Response]:
    """A respx ``side_effect`` answering each request with the next item (an exception is
    raised, as a transport failure)."""

    def gen() -> Iterator[Any]:
        yield from responses

    items = gen()

    def answer(request: httpx.Request) -> httpx.Response:
        item = next(items)
        if isinstance(item, Exception):
            raise item
        return item

    return answer  # type: ignore[return-value]


def agui_sse(*events: dict[str, Any]) -> bytes:
    """AG-UI SSE body (``data: <json>\\n\\n`` per event), as an AG-UI runtime sends it."""
    return b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events)
