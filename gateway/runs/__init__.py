"""The durable-run core: pump, readers, reaper, snapshot prelude and history (no HTTP).

Data flow (``docs/runs.md``): upstream events -> :class:`RunPump` (numbering, batching,
lease) -> store (durable) + broker (live) -> :func:`read_run` (subscribe, replay, tail) ->
the HTTP layer's encoder. :class:`RunManager` bundles them for the HTTP layer.
"""

from __future__ import annotations

from agui_codecs.core import RunFold

from .history import agui_messages_from_parts, history_items_to_agui, input_items, run_item
from .manager import RunManager, replica_id
from .prelude import Prelude, build_snapshot_prelude
from .pump import CANCELED_MESSAGE, INTERRUPTED_MESSAGE, RunOutcome, RunPump
from .reader import RunReader, read_run
from .reaper import Reaper
from .settings import RunSettings
from .writer import BATCHED_TYPES, RunWriter, terminal_status

__all__ = [
    "BATCHED_TYPES",
    "CANCELED_MESSAGE",
    "INTERRUPTED_MESSAGE",
    "Prelude",
    "Reaper",
    "RunFold",
    "RunManager",
    "RunOutcome",
    "RunPump",
    "RunReader",
    "RunSettings",
    "RunWriter",
    "agui_messages_from_parts",
    "build_snapshot_prelude",
    "history_items_to_agui",
    "input_items",
    "read_run",
    "replica_id",
    "run_item",
    "terminal_status",
]
