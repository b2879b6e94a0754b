"""Shared fixtures of the conformance tests.

``diffcorpus`` (the differential corpus builder) lives next to the tests; this directory is
put on ``sys.path`` so the test modules can import it under the import mode pytest uses
(``--import-mode=importlib``, ``pythonpath = ["tests/support"]``).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
