"""The garbage-collector policy of ``agui-gateway serve`` (:func:`gateway.server.gc_policy`):
the server ``serve`` builds applies it once started and hands the interpreter's back when it
stops, the settings declare it, and cycles made per request are still collected under it."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from gateway.app import create_app
from gateway.bounds_settings import DEFAULT_GC_THRESHOLD
from gateway.config import Settings
from gateway.server import GatewayServer, build_server, gc_policy, gc_policy_end, runtime_lines

STARTUP_DEADLINE_S = 30.0


@pytest.fixture(autouse=True)
def interpreter_gc() -> Iterator[tuple[int, int, int]]:
    """The test process's collector as it was, checked and put back after each test."""
    before = gc.get_threshold()
    yield before
    for _ in range(4):  # a failed test's leftovers (a no-op once none is applied)
        gc_policy_end()
    gc.set_threshold(*before)
    gc.unfreeze()


def settings(tmp_path: Path, **values: Any) -> Settings:
    return Settings(config=None, database_url=f"sqlite:///{tmp_path / 'runs.db'}", **values)


class Running:
    """A :func:`build_server` server (what ``serve`` runs) on port 0 in a thread."""

    def __init__(self, app: Any) -> None:
        self.server: GatewayServer = build_server(app, "127.0.0.1", 0, log_level="warning")
        self.thread = threading.Thread(target=self.server.run, name="gateway-gc", daemon=True)

    def __enter__(self) -> Running:
        self.thread.start()
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        while self.server.bound_port is None and self.thread.is_alive():
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        assert self.server.bound_port is not None
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(STARTUP_DEADLINE_S)
        assert not self.thread.is_alive()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.bound_port}"


def test_the_settings_declare_the_policy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    defaults = settings(tmp_path)
    assert defaults.gc_freeze is True
    assert defaults.gc_threshold == DEFAULT_GC_THRESHOLD > 700
    monkeypatch.setenv("GATEWAY_GC_FREEZE", "0")
    monkeypatch.setenv("GATEWAY_GC_THRESHOLD", "12345")
    read = settings(tmp_path)
    assert (read.gc_freeze, read.gc_threshold) == (False, 12345)
    monkeypatch.setenv("GATEWAY_GC_THRESHOLD", "-1")
    with pytest.raises(ValidationError):
        settings(tmp_path)


def test_the_server_serve_builds_applies_the_policy_and_restores_it(
    tmp_path: Path, interpreter_gc: tuple[int, int, int]
) -> None:
    app = create_app(settings(tmp_path, gc_threshold=23_456))
    with Running(app) as running:
        assert running.server.gc_applied
        assert gc.get_threshold() == (23_456, *interpreter_gc[1:])
        assert gc.get_freeze_count() > 1000  # the imported modules, the app, its routes
        with httpx.Client(timeout=10) as client:
            assert client.get(f"{running.url}/healthz").status_code == 200
    assert not running.server.gc_applied
    assert gc.get_threshold() == interpreter_gc
    assert gc.get_freeze_count() == 0


def test_the_off_switch_leaves_the_interpreter_alone(
    tmp_path: Path, interpreter_gc: tuple[int, int, int]
) -> None:
    app = create_app(settings(tmp_path, gc_freeze=False, gc_threshold=0))
    with Running(app) as running:
        assert not running.server.gc_applied
        assert gc.get_threshold() == interpreter_gc
        assert gc.get_freeze_count() == 0


def test_each_half_of_the_policy_alone(
    tmp_path: Path, interpreter_gc: tuple[int, int, int]
) -> None:
    assert gc_policy(settings(tmp_path, gc_freeze=False, gc_threshold=5000))
    assert gc.get_threshold()[0] == 5000 and gc.get_freeze_count() == 0
    gc_policy_end()
    assert gc_policy(settings(tmp_path, gc_freeze=True, gc_threshold=0))
    assert gc.get_threshold() == interpreter_gc and gc.get_freeze_count() > 0
    gc_policy_end()
    assert gc.get_threshold() == interpreter_gc and gc.get_freeze_count() == 0


def test_several_servers_in_one_process_the_last_to_stop_restores(
    tmp_path: Path, interpreter_gc: tuple[int, int, int]
) -> None:
    assert gc_policy(settings(tmp_path, gc_threshold=9000))
    assert gc_policy(settings(tmp_path, gc_threshold=9000))
    gc_policy_end()
    assert gc.get_threshold()[0] == 9000 and gc.get_freeze_count() > 0
    gc_policy_end()
    assert gc.get_threshold() == interpreter_gc and gc.get_freeze_count() == 0
    gc_policy_end()  # one too many: nothing to undo
    assert gc.get_threshold() == interpreter_gc


class Node:
    """A cycle: the node refers to itself and to a list that refers back to it."""

    def __init__(self, size: int) -> None:
        self.me = self
        self.items: list[Any] = [{"n": i, "up": self} for i in range(size)]


def test_cycles_made_per_request_are_collected_under_the_default_policy(tmp_path: Path) -> None:
    """Reference counting never frees a cycle; with the default threshold the young
    collections still come (each request's cycle adds ~100 containers to generation 0), and
    they free what the requests left, without anyone calling ``gc.collect``."""
    made: list[weakref.ref[Node]] = []

    async def cyclic(request: Request) -> PlainTextResponse:
        made.append(weakref.ref(Node(100)))
        return PlainTextResponse("ok")

    app = create_app(settings(tmp_path))
    app.router.routes.append(Route("/cyclic", cyclic))
    requests = 3 * DEFAULT_GC_THRESHOLD // 100
    with Running(app) as running, httpx.Client(timeout=10) as client:
        assert running.server.gc_applied
        for _ in range(requests):
            assert client.get(f"{running.url}/cyclic").status_code == 200
        freed = sum(ref() is None for ref in made)
    assert len(made) == requests
    assert freed >= requests // 2  # collected while serving, not only at the end


def test_the_start_up_lines_name_the_policy(tmp_path: Path) -> None:
    on = runtime_lines(settings(tmp_path, gc_threshold=4321), {})
    assert any(
        line.startswith("  gc:") and "start-up frozen" in line and "threshold 4321" in line
        for line in on
    )
    off = runtime_lines(settings(tmp_path, gc_freeze=False, gc_threshold=0), {})
    assert any("nothing frozen" in line and "the interpreter's" in line for line in off)
