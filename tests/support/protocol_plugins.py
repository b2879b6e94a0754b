"""Third-party protocol distributions the suite installs, to prove the plugin surface works.

``tests/plugins/<distribution>/`` holds real distributions (own ``pyproject.toml``, package,
entry points). :func:`install_plugins` installs them once per session, at configure time
(``tests/conftest.py``), before any test module is collected:

* ``pip install --no-deps --no-build-isolation --no-index --target <session dir>`` of a copy of
  each source folder (so no ``build/`` or ``*.egg-info`` lands in the repository), with the
  build backend of the test environment and no network;
* the target folder is appended to ``sys.path``: ``importlib.metadata`` finds the
  ``*.dist-info`` there, so the codec registry's entry-point scan sees the plugins like any
  installed distribution. Collection-time readers of the registry (the decoder contract suite
  parametrizes over ``agui_codecs.DECODERS``) therefore list them too;
* subprocesses get the folder through ``PYTHONPATH`` (:func:`subprocess_env`).

Chosen over installing into the virtualenv: nothing outside the session changes, the suite
stays runnable from a read-only or shared environment, and a plain ``pytest`` run sets it up.
A failed install does not stop collection: :data:`STATE` keeps the error and the plugin tests
fail with it (the rest of the suite runs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "PLUGINS_DIR",
    "STATE",
    "PluginState",
    "install_plugins",
    "remove_plugins",
    "subprocess_env",
]

PLUGINS_DIR = Path(__file__).resolve().parents[1] / "plugins"
"""``tests/plugins``: one folder per test distribution."""


@dataclass
class PluginState:
    """Where the session installed the plugins, or why it could not."""

    site: Path | None = None
    error: str | None = None
    installed: list[str] = field(default_factory=list)
    _tmp: Path | None = None

    def require(self) -> Path:
        """The install folder; raises ``RuntimeError`` with the install error if there is none."""
        if self.site is None:
            raise RuntimeError(f"the test plugins are not installed: {self.error}")
        return self.site


STATE = PluginState()
"""The session's plugin installation (set by :func:`install_plugins`)."""


def install_plugins() -> PluginState:
    """Install every distribution of :data:`PLUGINS_DIR` into a fresh session folder and put
    it on ``sys.path`` (see the module docstring). Idempotent within a process."""
    if STATE.site is not None or STATE.error is not None:
        return STATE
    tmp = Path(tempfile.mkdtemp(prefix="agui-plugins-"))
    STATE._tmp = tmp
    site = tmp / "site"
    sources = sorted(p for p in PLUGINS_DIR.iterdir() if (p / "pyproject.toml").is_file())
    for source in sources:
        copy = tmp / "src" / source.name
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        proc = subprocess.run(
            [
                sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                "--no-build-isolation", "--no-index", "--target", str(site), str(copy),
            ],
            capture_output=True, text=True, check=False, timeout=300,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )  # fmt: skip
        if proc.returncode != 0:
            STATE.error = f"pip install {source.name} failed:\n{proc.stdout}\n{proc.stderr}"
            return STATE
        STATE.installed.append(source.name)
    STATE.site = site
    sys.path.append(str(site))
    return STATE


def remove_plugins() -> None:
    """Delete the session folder (at unconfigure)."""
    if STATE._tmp is not None:
        shutil.rmtree(STATE._tmp, ignore_errors=True)


def subprocess_env() -> dict[str, str]:
    """``os.environ`` with the plugin folder prepended to ``PYTHONPATH``."""
    site = str(STATE.require())
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": site + (os.pathsep + path if path else "")}
