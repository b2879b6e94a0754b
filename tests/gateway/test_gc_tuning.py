"""The collector tuning of a process holding many open streams (``gateway/gc_tuning.py``,
issue 13 item 5): the app's lifespan freezes the start-up objects once and raises the young
generation's threshold (``GATEWAY_GC_YOUNG_THRESHOLD``); 0 leaves the collector alone."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from gateway.app import create_app
from gateway.config import Settings
from gateway.gc_tuning import tune_gc


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    yield saved
    gc.set_threshold(*saved)


def test_tuning_freezes_once_and_sets_the_young_threshold(
    thresholds: tuple[int, int, int],
) -> None:
    assert tune_gc(12_345)
    assert gc.get_threshold() == (12_345, *thresholds[1:])
    frozen = gc.get_freeze_count()
    assert frozen > 0  # the start-up objects: no collection traverses them
    assert tune_gc(23_456)
    assert gc.get_threshold() == (23_456, *thresholds[1:])
    assert gc.get_freeze_count() == frozen  # frozen once per process


def test_zero_leaves_the_collector_alone(thresholds: tuple[int, int, int]) -> None:
    assert not tune_gc(0)
    assert gc.get_threshold() == thresholds
    with pytest.raises(ValueError):
        tune_gc(-1)


def test_the_lifespan_applies_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, thresholds: tuple[int, int, int]
) -> None:
    monkeypatch.setenv("GATEWAY_GC_YOUNG_THRESHOLD", "4321")
    settings = Settings(config=None, database_url=f"sqlite:///{tmp_path}/runs.db")
    assert settings.gc_young_threshold == 4321
    with TestClient(create_app(settings)):
        assert gc.get_threshold()[0] == 4321
    assert Settings(config=None, database_url="sqlite://").gc_young_threshold == 4321
    monkeypatch.delenv("GATEWAY_GC_YOUNG_THRESHOLD")
    assert Settings(config=None, database_url="sqlite://").gc_young_threshold == 20_000
