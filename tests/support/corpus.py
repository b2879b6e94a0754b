"""Access to the shared recorded-stream corpus (``../shared/corpus``, see its MANIFEST.md).

Tests that read it run whenever it is present (always under CI) and skip with a clear reason
only where it is absent; under ``CI=true`` its absence fails the test instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["CORPUS_DIR", "corpus_files", "require_corpus", "require_service"]

CORPUS_DIR = Path(
    os.environ.get("GATEWAY_CORPUS_DIR")
    or Path(__file__).resolve().parents[3] / "shared" / "corpus"
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def corpus_files(family: str) -> list[Path]:
    """All files of one corpus family (``openai-chat``, ``anthropic``, ...), sorted.

    Returns an empty list when the corpus is absent (use :func:`require_corpus` in the test).
    """
    folder = CORPUS_DIR / family
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file())


def require_corpus(family: str) -> list[Path]:
    """Return the family's files; skip (locally) or fail (CI) when the corpus is absent."""
    files = corpus_files(family)
    if not files:
        reason = f"corpus family {family!r} not found under {CORPUS_DIR}"
        if _in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    return files


def require_service(ok: bool, reason: str) -> None:
    """Skip a test needing an external service locally; fail under ``CI=true``."""
    if not ok:
        if _in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
