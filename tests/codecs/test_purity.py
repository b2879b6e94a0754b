"""The codecs are sans-I/O (issue 10): importing every ``agui_codecs`` module loads no I/O library.

Run in a fresh interpreter (this test process has the whole gateway loaded): every submodule
found by ``pkgutil.walk_packages`` is imported, then ``sys.modules`` must hold none of the HTTP,
database, broker and event-loop libraries. The distribution's declared dependencies are checked
in ``tests/test_deployment_files.py`` (``test_codecs_install_alone_without_io_libraries``).
"""

from __future__ import annotations

import json
import subprocess
import sys

IO_MODULES = (
    "asyncio",
    "anyio",
    "httpx",
    "httpcore",
    "starlette",
    "uvicorn",
    "sqlalchemy",
    "alembic",
    "asyncpg",
    "aiosqlite",
    "redis",
)

_PROBE = """
import importlib, json, pkgutil, sys
import agui_codecs
names = sorted(m.name for m in pkgutil.walk_packages(agui_codecs.__path__, "agui_codecs."))
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def test_importing_every_codec_module_loads_no_io_library() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert "agui_codecs.protocols.openai_chat.request" in result["modules"]
    assert "agui_codecs.registry" in result["modules"]
    assert len(result["modules"]) >= 40  # the walk found the package, not an empty shell
    loaded = set(result["loaded"])
    assert not loaded & set(IO_MODULES), f"I/O libraries loaded: {sorted(loaded & set(IO_MODULES))}"
    assert "gateway" not in loaded and "conformance" not in loaded
