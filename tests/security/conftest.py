"""The security tests drive the app over every run store (``tests/contracts/run_backends.py``)
with the durable-run helpers of ``tests/replicas/durable_support.py``."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]
for folder in ("contracts", "replicas", "security"):
    if str(_TESTS / folder) not in sys.path:
        sys.path.insert(0, str(_TESTS / folder))
