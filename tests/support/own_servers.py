"""A test's own PostgreSQL and Redis servers, on free ports, that the test may stop.

The machine's shared servers (127.0.0.1:5432, :6379) are never stopped by a test: a test that
needs a server to go away starts its own here (PostgreSQL: ``initdb`` + ``pg_ctl`` in a
temporary directory, as the ``postgres`` user when run as root, since ``initdb`` refuses root;
Redis: ``redis-server`` without persistence) and stops only that one, by its own PID / data
directory. Missing binaries skip locally and fail under ``CI=true`` (``require_service``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from corpus import require_service

__all__ = ["OwnPostgres", "OwnRedis", "free_port", "own_postgres", "own_redis"]

PG_BIN_DIRS = [Path(f"/usr/lib/postgresql/{v}/bin") for v in (17, 16, 15, 14, 13)]


def free_port() -> int:
    """A TCP port nothing listens on right now (bound to port 0, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def _pg_bin() -> Path | None:
    for folder in PG_BIN_DIRS:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@dataclass
class OwnPostgres:
    """A running PostgreSQL of the test's own. ``url``: its asyncpg URL (trust auth)."""

    port: int
    data: Path
    bin: Path
    as_user: list[str]

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        """Stop it now (``pg_ctl stop -m immediate``: connections drop at once)."""
        subprocess.run(
            [
                *self.as_user,
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
            check=False,
            capture_output=True,
            timeout=60,
        )


@contextlib.contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    """Start a PostgreSQL of the test's own on a free port; stopped and removed afterwards."""
    folder = _pg_bin()
    require_service(folder is not None, "PostgreSQL server binaries (initdb, pg_ctl) not found")
    assert folder is not None
    as_user: list[str] = []
    root = tempfile.mkdtemp(prefix="agui-own-pg-")
    data = Path(root) / "data"
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        require_service(runuser is not None, "runuser not found (initdb refuses to run as root)")
        as_user = [str(runuser), "-u", "postgres", "--"]
        shutil.chown(root, "postgres")
    subprocess.run(
        [
            *as_user,
            str(folder / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = free_port()
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {root} -c fsync=off"
    server = OwnPostgres(port, data, folder, as_user)
    try:
        subprocess.run(
            [
                *as_user,
                str(folder / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                f"{root}/log",
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        _wait_port(port, 30)
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class OwnRedis:
    """A running Redis of the test's own (no persistence). ``url``: ``redis://`` URL."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        """Stop it now (SIGKILL to its own PID)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@contextlib.contextmanager
def own_redis() -> Iterator[OwnRedis]:
    """Start a Redis of the test's own on a free port; stopped afterwards."""
    binary = shutil.which("redis-server")
    require_service(binary is not None, "redis-server not found")
    assert binary is not None
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = OwnRedis(port, process)
    try:
        _wait_port(port, 30)
        yield server
    finally:
        server.stop()
