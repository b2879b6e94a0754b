"""The run inspector (issue 16 §6): a page served at ``/inspect`` that shows a tenant's threads
and runs and one run's live timeline, each event annotated with the conformance kit's verdicts.

* :mod:`gateway.inspect.verdicts`: the kit run over a run's stored events, per-event findings
  by cursor, and the state a client holds after them (what ``GET /inspect/api/verdicts``
  answers);
* ``static/``: the page itself (``index.html``, ``inspect.js``, ``inspect.css``: plain HTML,
  JavaScript and CSS, shipped as package data, no CDN and no build step);
* the HTTP side is :mod:`gateway.routes.inspect`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from .verdicts import RunVerdicts, run_verdicts

__all__ = ["STATIC_DIR", "RunVerdicts", "run_verdicts"]

STATIC_DIR: Final[Path] = Path(__file__).resolve().parent / "static"
"""The page's files (package data)."""
