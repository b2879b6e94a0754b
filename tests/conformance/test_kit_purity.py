"""The kit stands on its own (issue 17): it needs the codec library, not the gateway server.

In a fresh interpreter every ``conformance`` module is imported; ``sys.modules`` must then hold
no gateway module and none of the server-side libraries (HTTP client or server frameworks,
databases, brokers, event loops). ``conformance/pyproject.toml`` (the ``agui-conformance``
distribution) declares only ``agui-codecs`` and ``jsonpatch``; checked here too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

SERVER_MODULES = ("gateway", "httpx", "httpcore", "starlette", "uvicorn", "fastapi",
                  "sqlalchemy", "alembic", "asyncpg", "aiosqlite", "redis", "anyio", "asyncio")  # fmt: skip

_PROBE = """
import importlib, json, pkgutil, sys
import conformance
names = sorted(m.name for m in pkgutil.walk_packages(conformance.__path__, "conformance."))
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def test_importing_every_kit_module_loads_no_gateway_or_server_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert "conformance.scenarios.model_server" in result["modules"]
    assert "conformance.live" in result["modules"]
    loaded = set(result["loaded"])
    assert not loaded & set(SERVER_MODULES), sorted(loaded & set(SERVER_MODULES))
    assert "agui_codecs" in loaded


def test_the_kit_distribution_depends_on_the_codecs_only() -> None:
    project = tomllib.loads(
        (Path(__file__).resolve().parents[2] / "conformance" / "pyproject.toml").read_text()
    )["project"]
    assert project["name"] == "agui-conformance"
    assert [d.split("=")[0].split(">")[0] for d in project["dependencies"]] == [
        "agui-codecs", "jsonpatch",
    ]  # fmt: skip
    assert project["scripts"]["agui-conformance"] == "conformance.cli:main"
