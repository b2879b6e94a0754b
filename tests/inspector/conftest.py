"""The inspector tests import their live gateway (``live_gateway.py``) from this folder; the
browser fixtures come from the root conftest (``tests/support/browser.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
