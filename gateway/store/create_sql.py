"""A run's creation in SQL: one run, or the creations of a group commit together (issue 13).

:class:`NewRun` is what :meth:`~gateway.store.sql.SqlRunStore.create_run` writes: the thread
row created or locked with a position reserved for each input item, the items
(:func:`~gateway.store.history_sql.add_input`), the run row (``INSERT ... RETURNING``), its
interrupt answers (:func:`~gateway.store.answers_sql.claim`) and its first events (the
announced RUN_STARTED, inserted with the group's rows). Called, it does that for one run
(about four statements).

A burst of new runs (the added-latency bench's C=64 clients start together; a frontend's
page load) lands its creations in one group, and one statement each was most of that group's
time: on SQLite every statement hands the GIL to the database thread and back, and while the
event loop's thread runs Python each hand-over waits for its switch interval, so fifty
creations held the group, and the first byte of every run in it, for 50-100 ms.
:meth:`NewRun.batch` writes a group's creations with one statement per table: the thread
rows in one upsert (``ON CONFLICT (id) DO UPDATE``, each reserving its items' positions;
``RETURNING id, next_position``), the input items of the threads that had none in one
``messages`` insert and one ``message_aliases`` insert (:func:`~gateway.store.history_sql.
input_rows`: what the one-run path stores), the run rows in one ``INSERT ... RETURNING``.
What it cannot write that way it writes as one run each, after: a creation with interrupt
answers, one without input, one on a thread another creation of the group names too, and the
input of a thread that had messages already (whose aliases must be looked up first).
``tests/contracts/test_store_create_batch.py`` checks that a group's tables end up as its
creations one at a time leave them, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite

from .answers_sql import Answer, claim
from .group_commit import StepRows
from .history_sql import add_input, add_locked, flush_rows, input_rows, set_next_position
from .models import JsonObject, RunRecord
from .schema import threads
from .sql_statements import CREATE_RUN, run_from_row
from .sql_writes import PreparedAppend, event_rows

__all__ = ["NewRun"]

_UPSERT_THREADS: dict[str, Any] = {}
"""Per dialect: the thread rows of a group's creations, created or locked, each reserving
``next_position - 1`` positions (``excluded.next_position``: ``1 + reserve``)."""


def _upsert_threads(dialect: str) -> Any:
    statement = _UPSERT_THREADS.get(dialect)
    if statement is None:
        insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
        statement = insert(threads)
        statement = _UPSERT_THREADS[dialect] = statement.on_conflict_do_update(
            index_elements=["id"],
            set_={
                "updated_at": statement.excluded.updated_at,
                "next_position": threads.c.next_position + statement.excluded.next_position - 1,
            },
        ).returning(threads.c.id, threads.c.next_position)
    return statement


@dataclass(frozen=True, slots=True, eq=False)
class NewRun:
    """One run to create (see the module docstring); a step of a group commit
    (:meth:`~gateway.store.group_commit.GroupCommitter.call`): called with a connection and
    the group's time, it returns the run's record, or :class:`StepRows` with its first events'
    rows.

    Attributes:
        thread_id: the thread's store key.
        values: the ``runs`` row but its times (``heartbeat_at``, ``created_at``,
            ``updated_at``: the group's ``now``).
        items: the input as history items (:func:`gateway.runs.history.input_items`).
        answers: the interrupt answers it claims.
        first: its first events (seq 1 on), or None.
    """

    thread_id: str
    values: dict[str, Any]
    items: Sequence[JsonObject]
    answers: Sequence[Answer]
    first: PreparedAppend | None

    @property
    def run_id(self) -> str:
        """The run's store key."""
        return str(self.values["id"])

    def _row(self, now: datetime) -> dict[str, Any]:
        return {**self.values, "heartbeat_at": now, "created_at": now, "updated_at": now}

    def _done(self, record: RunRecord, now: datetime) -> RunRecord | StepRows:
        if self.first is None:
            return record
        return StepRows(record, event_rows(self.first, now))

    async def __call__(self, conn: Any, now: datetime) -> RunRecord | StepRows:
        """Create this run alone in ``conn``'s transaction.

        Raises:
            sqlalchemy.exc.IntegrityError: the run id is taken, or an answered interrupt.
        """
        await add_input(conn, self.thread_id, self.items, now)  # and the thread row
        row = (await conn.execute(CREATE_RUN, self._row(now))).one()
        await claim(conn, self.thread_id, self.run_id, self.answers, now)
        return self._done(run_from_row(row), now)

    @staticmethod
    async def batch(conn: Any, creations: Sequence[NewRun], now: datetime) -> list[Any]:
        """Create ``creations`` in ``conn``'s transaction with one statement per table (the
        module docstring); their results in their order.

        Raises:
            sqlalchemy.exc.IntegrityError: a run id is taken (the group reruns each request
                alone, and that creation's caller gets ``RunExistsError``).
        """
        per_thread = Counter(c.thread_id for c in creations)
        together = [
            c for c in creations if c.items and not c.answers and per_thread[c.thread_id] == 1
        ]
        results: dict[int, Any] = {}
        if len(together) > 1:
            outcomes = await _create_together(conn, together, now)
            results = dict(zip(map(id, together), outcomes, strict=True))
        for creation in creations:
            if id(creation) not in results:
                results[id(creation)] = await creation(conn, now)
        return [results[id(c)] for c in creations]


async def _create_together(conn: Any, creations: Sequence[NewRun], now: datetime) -> list[Any]:
    """The creations on distinct threads, each with input and no answers, written together;
    their results in their order."""
    locked = await conn.execute(
        _upsert_threads(conn.dialect.name),
        [
            {
                "id": c.thread_id,
                "next_position": 1 + len(c.items),
                "created_at": now,
                "updated_at": now,
            }
            for c in creations
        ],
    )
    ends = {row.id: int(row.next_position) for row in locked.all()}
    messages: list[dict[str, Any]] = []
    aliases: list[dict[str, Any]] = []
    for creation in creations:
        thread = creation.thread_id
        position = ends[thread] - len(creation.items)
        # input is the thread's, not the run's (run_id None: add_input's rows)
        if position > 1:  # the thread has messages: its input's names are looked up first
            await add_locked(conn, thread, creation.items, None, now, False, position)
            continue
        rows, names, end = input_rows(thread, creation.items, None, now, position, {})
        messages += rows
        aliases += names
        if len(rows) != len(creation.items):  # the input repeated itself: positions back
            await set_next_position(conn, thread, end)
    await flush_rows(conn, (messages, aliases))
    created = await conn.execute(CREATE_RUN, [c._row(now) for c in creations])
    records = {record.id: record for record in map(run_from_row, created.all())}
    return [creation._done(records[creation.run_id], now) for creation in creations]
