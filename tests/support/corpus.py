"""The recorded-stream corpus that travels with the repository (``tests/corpus``).

Every file's source repository, path, commit and license is in ``tests/corpus/MANIFEST.md``;
the license texts are in ``tests/corpus/LICENSES``. Tests read only this copy, so a fresh clone
tests the same inputs on any machine.

``GATEWAY_EXTRA_CORPUS`` may name one more folder laid out the same way (``<family>/<file>``):
its files are *added* to the families that tests iterate over (:func:`corpus_files`); it never
replaces the repository's copy, and tests that name one file (:func:`corpus_path`) always read
the repository's.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

__all__ = [
    "CORPUS_DIR",
    "EXTRA_CORPUS_ENV",
    "FAMILIES",
    "corpus_files",
    "corpus_path",
    "in_ci",
    "require_corpus",
    "require_modules",
    "require_service",
]

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpus"
"""``tests/corpus`` of this checkout."""

EXTRA_CORPUS_ENV = "GATEWAY_EXTRA_CORPUS"

FAMILIES = ("openai-chat", "openai-responses", "anthropic", "gemini", "agui", "aisdk-ui")
"""The corpus families (folder names under ``tests/corpus``)."""


def in_ci() -> bool:
    """True under ``CI=true``, where a missing tool or service fails instead of skipping."""
    return os.environ.get("CI", "").lower() == "true"


def _extra_dir() -> Path | None:
    value = os.environ.get(EXTRA_CORPUS_ENV)
    return Path(value) if value else None


def _files_in(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def corpus_files(family: str) -> list[Path]:
    """All files of one corpus family (``openai-chat``, ``anthropic``, ...), sorted.

    The repository's files first, then those of ``$GATEWAY_EXTRA_CORPUS/<family>`` if set.
    Never empty for a family of :data:`FAMILIES` (the repository carries each one).
    """
    files = _files_in(CORPUS_DIR / family)
    extra = _extra_dir()
    if extra is not None:
        files += _files_in(extra / family)
    return files


def corpus_path(name: str) -> Path:
    """The repository's corpus file ``<family>/<file>``.

    Raises:
        FileNotFoundError: the repository has no such file (a test naming a file that is not
            in ``tests/corpus`` is a bug in the test, not a reason to skip).
    """
    path = CORPUS_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"{name} is not in {CORPUS_DIR}")
    return path


def require_corpus(family: str) -> list[Path]:
    """Return the family's files (see :func:`corpus_files`); fail when there are none.

    The corpus is part of the repository, so an empty family is always a fault.
    """
    files = corpus_files(family)
    if not files:
        pytest.fail(f"corpus family {family!r} not found under {CORPUS_DIR}")
    return files


def require_service(ok: bool, reason: str) -> None:
    """Skip a test needing an external tool or service locally; fail under ``CI=true``.

    The one rule of the suite for what may be missing (Node.js and the harnesses' packages,
    PostgreSQL, Redis, optional Python packages): call it from inside a test or fixture, never
    at import, so collection never fails.
    """
    if not ok:
        if in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


def require_modules(*names: str) -> None:
    """Skip (locally) or fail (``CI=true``) a test needing Python packages that are missing."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            require_service(False, f"{name} is not installed ({exc}); pip install -e '.[dev]'")
