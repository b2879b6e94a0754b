"""Session set-up shared by every test folder: client auth off (``GATEWAY_AUTH=off``, below),
and the third-party protocol plugins of ``tests/plugins`` installed before collection (see
``tests/support/protocol_plugins.py``).

They are installed when this module is imported, not in ``pytest_configure``: pytest imports
the conftest files of the given paths (``tests/runs/conftest.py`` ...) before it configures,
and those import the gateway, which may read the codec registry (scanned once). This file is
their parent, so it is imported first.
"""

from __future__ import annotations

import os

# Strict codecs (agui_codecs.core.illegal): RunBuilder checks every event it emits against the
# AG-UI transition tables and raises IllegalEventError instead of letting an illegal one out.
# Set before anything imports the codecs; server processes the tests start inherit it.
os.environ.setdefault("AGUI_CODECS_STRICT", "1")

import pytest
from browser import artifacts, browser_page
from protocol_plugins import install_plugins, remove_plugins

__all__ = ["artifacts", "browser_page"]  # fixtures for the browser tests (tests/support/browser.py)

# Client auth is on by default (GATEWAY_AUTH=auto). The suite turns it off here, in this one
# place, for every app it builds and every server process it starts; the tests of auth and
# tenancy (tests/security) set GATEWAY_AUTH themselves.
os.environ["GATEWAY_AUTH"] = "off"

install_plugins()


def pytest_unconfigure(config: pytest.Config) -> None:
    remove_plugins()
