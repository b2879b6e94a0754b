"""Run compiled A2UI v0.9 messages through the real renderer core (``check.mjs``).

``check.mjs`` (this folder) feeds each job's messages to ``@a2ui/web_core`` 0.11.0 (what
``@a2ui/react`` / ``@a2ui/lit`` use) and 0.10.4 (what ``@copilotkit/a2ui-renderer`` 1.74 pins),
resolves the whole component tree the way their renderers do, and reports every error. See
``README.md``.

Usage from a test (``tests/ui/conftest.py`` puts this folder on ``sys.path``)::

    from a2ui_renderer import RENDERERS, render, require_renderer

    def test_surface_renders() -> None:
        require_renderer()
        results = render({"orders": ui_schema["messages"]})
        for name in RENDERERS:
            assert results["orders"][name]["ok"], results["orders"][name]["errors"]
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypedDict

__all__ = ["HARNESS_DIR", "RENDERERS", "RenderResult", "available", "render", "require_renderer"]

HARNESS_DIR: Final[Path] = Path(__file__).resolve().parent
"""This folder (``package.json``, ``check.mjs``; ``node_modules`` after ``npm ci``)."""

RENDERERS: Final[tuple[str, ...]] = ("web_core@0.11.0", "web_core@0.10.4")
"""Result keys per job: one per pinned renderer core."""

_REQUIRED: Final = ("@a2ui/web_core", "web_core_copilotkit")
_MIN_NODE_MAJOR: Final = 20
_TIMEOUT_S: Final = 120.0


class RenderResult(TypedDict):
    """One renderer's verdict on one job (see ``check.mjs``).

    ``ok``: a surface was created and no error was thrown, logged with ``console.error`` or
    dispatched on the surface. ``texts`` are the resolved ``Text.text`` values in tree order
    (after the renderer's own formatDate / formatCurrency / ... ran), ``images`` the resolved
    ``Image.url`` values, ``icons`` the resolved ``Icon.name`` values, ``buttons`` the
    ``{child, action, resolvedLabel}`` of each Button, ``components`` the number of component
    instances rendered (templates expanded).
    """

    ok: bool
    errors: list[str]
    warnings: list[str]
    surfaces: list[str]
    texts: list[str]
    images: list[str]
    icons: list[str]
    buttons: list[dict[str, Any]]
    components: int


@functools.cache
def _node_major(node: str) -> int | None:
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        )
        return int(done.stdout.strip().lstrip("v").split(".", 1)[0])
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def available() -> tuple[bool, str]:
    """``(True, "")`` when node >= 20 and the pinned packages are installed, else why not."""
    node = shutil.which("node")
    if node is None:
        return False, "node is not on PATH (Node.js >= 20 runs the A2UI renderer tests)"
    major = _node_major(node)
    if major is None or major < _MIN_NODE_MAJOR:
        return False, f"node {major} is too old or unreadable: Node.js >= 20 is needed"
    modules = HARNESS_DIR / "node_modules"
    missing = [p for p in _REQUIRED if not (modules / p / "package.json").is_file()]
    if missing:
        return False, f"{modules} lacks {', '.join(missing)}: run `npm ci` in {HARNESS_DIR}"
    return True, ""


def require_renderer() -> None:
    """Skip the calling test when the harness is unavailable; fail it when ``CI=true``
    (:func:`corpus.require_service`, the suite's one rule)."""
    from corpus import require_service

    ok, reason = available()
    require_service(ok, f"A2UI renderer harness unavailable: {reason}")


def render(jobs: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict[str, RenderResult]]:
    """Render each job's A2UI messages with every pinned renderer, in one Node process.

    Args:
        jobs: ``{job id: [A2UI v0.9 message, ...]}``.

    Returns:
        ``{job id: {renderer name: RenderResult}}`` (renderer names in :data:`RENDERERS`).

    Raises:
        RuntimeError: the harness is unavailable, or Node fails / prints no result JSON.

    Node runs with ``TZ=UTC`` so ``formatDate`` output does not depend on the machine.
    """
    ok, reason = available()
    if not ok:
        raise RuntimeError(f"A2UI renderer harness unavailable: {reason}")
    request = {"jobs": [{"id": k, "messages": list(v)} for k, v in jobs.items()]}
    node = shutil.which("node") or "node"
    env = {**os.environ, "TZ": "UTC"}
    try:
        done = subprocess.run(
            [node, str(HARNESS_DIR / "check.mjs")],
            input=json.dumps(request).encode("utf-8"),
            capture_output=True,
            cwd=HARNESS_DIR,
            env=env,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"check.mjs did not finish within {_TIMEOUT_S:.0f} s") from exc
    stderr = done.stderr.decode("utf-8", "replace")
    try:
        response = json.loads(done.stdout)
    except ValueError as exc:
        raise RuntimeError(
            f"check.mjs exit {done.returncode}, no JSON: {done.stdout[:500]!r}; stderr:\n{stderr}"
        ) from exc
    if "harnessError" in response or done.returncode != 0:
        raise RuntimeError(f"check.mjs failed: {response.get('harnessError')}; stderr:\n{stderr}")
    results: dict[str, dict[str, RenderResult]] = response["results"]
    return results
