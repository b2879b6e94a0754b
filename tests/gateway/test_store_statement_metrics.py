"""Each SQL statement is timed under its own verb (``agui_gateway_store_operation_seconds``,
``gateway/store/engine.py``), also once the per-statement cache of metric children is full:
the cache only saves the ``labels()`` call, it never picks the label."""

from __future__ import annotations

from gateway.metrics import REGISTRY
from gateway.store import engine

_NAME = "agui_gateway_store_operation_seconds_count"


def _count(verb: str) -> float:
    return REGISTRY.get_sample_value(_NAME, {"operation": verb}) or 0.0


class _Conn:
    def __init__(self) -> None:
        self.info: dict[str, object] = {}


def test_every_statement_counts_under_its_verb_past_the_cache_bound() -> None:
    conn = _Conn()
    verbs = ["SELECT", "INSERT", "UPDATE", "DELETE"]
    before = {verb: _count(verb) for verb in verbs}
    total = engine._STATEMENTS + 100  # past the cache's bound
    for n in range(total):
        verb = verbs[n % len(verbs)]
        statement = f"\n    {verb.lower()} /* {n} */ x FROM t"  # distinct texts, lower case
        for _ in range(2):  # the second time from the cache (or past its bound)
            engine._before(conn, None, statement)
            engine._after(conn, None, statement)
    for verb in verbs:
        assert _count(verb) - before[verb] == 2 * total / len(verbs)
    assert len(engine._SECONDS_BY_STATEMENT) <= engine._STATEMENTS
