"""Real processes of the replica tests: ``agui-gateway serve`` replicas and the slow upstream,
each on 127.0.0.1 with a free port, its output in a log file, stopped (or ``kill -9``-ed) by
its own pid; and the services and settings they share."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

HERE = Path(__file__).resolve().parent

PG_URL = os.environ.get(
    "GATEWAY_TEST_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("GATEWAY_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

LEASE = {
    "GATEWAY_HEARTBEAT_INTERVAL": "0.5",
    "GATEWAY_LEASE_TIMEOUT": "2",
    "GATEWAY_REAPER_INTERVAL": "0.5",
    "GATEWAY_READER_RECHECK": "0.25",
    "GATEWAY_BATCH_INTERVAL": "0.05",
    "GATEWAY_KEEPALIVE_SECONDS": "1",
    "GATEWAY_RETENTION_SECONDS": "0",
}
"""Short intervals of the replicas: a dead replica's run is interrupted within about
``LEASE_TIMEOUT + REAPER_INTERVAL + READER_RECHECK`` seconds."""
STARTUP_SECONDS = 60.0
"""Liveness bound on a process start (imports, migrations, bind)."""


def _wait_for(path: Path, pattern: re.Pattern[str], proc: subprocess.Popen[bytes]) -> re.Match[str]:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        match = pattern.search(path.read_text(errors="replace"))
        if match:
            return match
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"{path.name}: process did not start:\n{path.read_text(errors='replace')}")


@dataclass
class Process:
    """A child process with its log file (stdout and stderr together)."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    port: int
    _files: list[IO[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill9(self) -> None:
        """``kill -9``: no shutdown code runs (leases are left to expire)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a bounded grace period; closes the log."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill9()
        for handle in self._files:
            handle.close()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def _spawn(
    name: str, argv: list[str], env: dict[str, str], log: Path
) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    handle = log.open("wb")
    proc = subprocess.Popen(
        argv,
        stdout=handle,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=log.parent,
        start_new_session=True,
    )
    return proc, handle


def start_script(
    name: str, argv: list[str], folder: Path, port_line: str, env: dict[str, str] | None = None
) -> Process:
    """Start ``argv`` (a server script) with its log in ``folder/<name>.log``; returns once the
    log shows ``port_line``, a regular expression whose group 1 is the port it listens on."""
    log = folder / f"{name}.log"
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    proc, handle = _spawn(name, argv, full_env, log)
    match = _wait_for(log, re.compile(port_line), proc)
    return Process(name, proc, log, int(match.group(1)), [handle])


def start_upstream(folder: Path) -> Process:
    """Start ``slow_upstream.py``; returns once it listens."""
    argv = [sys.executable, str(HERE / "slow_upstream.py")]
    return start_script("upstream", argv, folder, r"listening (\d+)", {"PYTHONPATH": str(HERE)})


def gateway_command() -> list[str]:
    """``agui-gateway`` of this interpreter's environment (the console script)."""
    script = Path(sys.executable).with_name("agui-gateway")
    if script.exists():
        return [str(script)]
    found = shutil.which("agui-gateway")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from gateway.cli import main; sys.exit(main())"]


def start_gateway(name: str, folder: Path, routes: Path, env: dict[str, str]) -> Process:
    """Start ``agui-gateway serve --config routes --host 127.0.0.1 --port 0`` with ``env``
    (``GATEWAY_*`` settings) and wait until ``/healthz`` answers."""
    log = folder / f"{name}.log"
    argv = [
        *gateway_command(),
        "serve",
        "--config",
        str(routes),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
    ]
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
    proc, handle = _spawn(name, argv, full_env, log)
    match = _wait_for(log, re.compile(r"http://127\.0\.0\.1:(\d+)/"), proc)
    replica = Process(name, proc, log, int(match.group(1)), [handle])
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            if httpx.get(f"{replica.url}/healthz", timeout=5).status_code == 200:
                return replica
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            replica.stop()
            raise AssertionError(f"{name} did not become healthy:\n{replica.output()}")
        time.sleep(0.05)


def start_gateways(
    names: Sequence[str], folder: Path, routes: Path, env: dict[str, str]
) -> list[Process]:
    """:func:`start_gateway` for each name, in parallel; if one fails, the others are stopped
    and its error raised."""
    with ThreadPoolExecutor(len(names)) as pool:
        started = [pool.submit(start_gateway, n, folder, routes, env) for n in names]
        wait(started)
    replicas = [f.result() for f in started if f.exception() is None]
    if len(replicas) < len(names):
        for replica in replicas:
            replica.stop()
        raise next(e for f in started if (e := f.exception()) is not None)
    return replicas


def replica_env(
    schema: str, prefix: str, *, pg_url: str = PG_URL, redis_url: str = REDIS_URL
) -> dict[str, str]:
    """The ``GATEWAY_*`` settings of replicas sharing ``schema`` and the Redis ``prefix``
    (:data:`LEASE` intervals; ``pg_url`` / ``redis_url`` may point at a proxy)."""
    return {
        **LEASE,
        "GATEWAY_DATABASE_URL": pg_url,
        "GATEWAY_DATABASE_SCHEMA": schema,
        "GATEWAY_REDIS_URL": redis_url,
        "GATEWAY_REDIS_PREFIX": prefix,
    }


@dataclass
class Pair:
    """Two replicas over one database schema and one Redis key prefix."""

    a: Process
    b: Process
    schema: str
    prefix: str
