"""Session set-up shared by every test folder: the third-party protocol plugins of
``tests/plugins`` are installed before collection (see ``tests/support/protocol_plugins.py``).

They are installed when this module is imported, not in ``pytest_configure``: pytest imports
the conftest files of the given paths (``tests/runs/conftest.py`` ...) before it configures,
and those import the gateway, which may read the codec registry (scanned once). This file is
their parent, so it is imported first.
"""

from __future__ import annotations

import pytest
from protocol_plugins import install_plugins, remove_plugins

install_plugins()


def pytest_unconfigure(config: pytest.Config) -> None:
    remove_plugins()
