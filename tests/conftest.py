"""Session set-up shared by every test folder: the third-party protocol plugins of
``tests/plugins`` are installed before collection (see ``tests/support/protocol_plugins.py``)."""

from __future__ import annotations

import pytest
from protocol_plugins import install_plugins, remove_plugins


def pytest_configure(config: pytest.Config) -> None:
    install_plugins()


def pytest_unconfigure(config: pytest.Config) -> None:
    remove_plugins()
