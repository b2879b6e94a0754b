"""The SQL side of threads and history: message positions, deduplication by alias, paging.

Used by :class:`gateway.store.sql.SqlRunStore` inside its transactions. Positions are
allocated under the thread row's lock (``UPDATE threads ... RETURNING next_position``), so
concurrent runs of one thread never collide; every item registers its own id and its
``aliases`` in ``message_aliases``, and an input item whose id or alias is known is skipped
(a client echoing the conversation back in its next RunAgentInput).

The statement that locks the thread also reserves a position for every item (``next_position
+ n``), and gives back the unused ones only when some item was skipped or updated in place; a
run's own new item is inserted without the alias lookup first (``ON CONFLICT DO NOTHING``;
the lookup runs when the id is taken). :func:`add_items` with ``create=True`` also creates the
thread row in the locking statement (an upsert), instead of :func:`ensure_thread` first. A
run's creation with its input and its terminal write so cost two statements less each (issue
13: every statement is ~0.15-0.2 ms of CPU on SQLite, mostly the driver's round trip, not the
database); what they store is the same (``tests/contracts/test_history_reserve.py``).

The alias lookup is skipped on a thread without messages (its positions start at 1, and no
alias is stored without a message), so a new thread's input costs no lookup; the items of a
call are inserted in one multi-row ``INSERT`` into ``messages`` and one into
``message_aliases`` (not two statements per item), flushed before an item updated in place
(which may read one inserted just before).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from .errors import RunNotFoundError
from .models import HistoryPage, JsonObject
from .protocol import HISTORY_MAX_LIMIT
from .schema import message_aliases, messages, threads
from .sql_statements import padded_count

__all__ = [
    "VISIBILITY_CONTEXT",
    "VISIBILITY_HISTORY",
    "add_input",
    "add_items",
    "add_locked",
    "add_own_items",
    "ensure_thread",
    "flush_rows",
    "history_page",
    "input_rows",
    "insert_ignore",
    "set_next_position",
    "visibility_mask",
]

VISIBILITY_HISTORY: Final[int] = 1
"""``messages.visibility`` bit: shown in the conversation history."""

VISIBILITY_CONTEXT: Final[int] = 2
"""``messages.visibility`` bit: sent back to the model when a request is assembled."""


def visibility_mask(item: JsonObject) -> int:
    """Bit mask of an item's ``visibility`` object (missing keys count as visible)."""
    vis = item.get("visibility")
    if not isinstance(vis, dict):
        return VISIBILITY_HISTORY | VISIBILITY_CONTEXT
    return (VISIBILITY_HISTORY if vis.get("history", True) else 0) | (
        VISIBILITY_CONTEXT if vis.get("context", True) else 0
    )


def insert_ignore(dialect: str, table: sa.Table, keys: list[str]) -> Any:
    """``INSERT ... ON CONFLICT (keys) DO NOTHING`` for PostgreSQL or SQLite."""
    if dialect == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing(index_elements=keys)
    return sqlite.insert(table).on_conflict_do_nothing(index_elements=keys)


_ENSURE_THREAD: dict[str, Any] = {}
"""``insert_ignore`` of a thread row per dialect, built once (its cache key is memoized)."""

_INSERT_ALIASES: dict[str, Any] = {}
"""``insert_ignore`` of alias rows per dialect, built once."""

# The statements of add_items, built once with bound parameters (a reused statement skips
# building the expression and its cache key: ~0.1 ms each on a small machine).
_LOCK_THREAD = (
    sa.update(threads)
    .where(threads.c.id == sa.bindparam("p_thread_id", type_=threads.c.id.type))
    .values(
        updated_at=sa.bindparam("p_now", type_=threads.c.updated_at.type),
        next_position=threads.c.next_position
        + sa.bindparam("p_reserve", type_=threads.c.next_position.type),
    )
    .returning(threads.c.next_position)
)
_UPSERT_THREAD: dict[str, Any] = {}
"""Per dialect: create the thread row, or lock it as :data:`_LOCK_THREAD` does (one
statement; ``INSERT ... ON CONFLICT (id) DO UPDATE ... RETURNING next_position``)."""


def _upsert_thread(dialect: str) -> Any:
    statement = _UPSERT_THREAD.get(dialect)
    if statement is None:
        insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
        reserve = sa.bindparam("p_reserve", type_=threads.c.next_position.type)
        now = sa.bindparam("p_now", type_=threads.c.updated_at.type)
        statement = _UPSERT_THREAD[dialect] = (
            insert(threads)
            .values(
                id=sa.bindparam("p_thread_id", type_=threads.c.id.type),
                next_position=1 + reserve,
                created_at=now,
                updated_at=now,
            )
            .on_conflict_do_update(
                index_elements=["id"],
                set_={"updated_at": now, "next_position": threads.c.next_position + reserve},
            )
            .returning(threads.c.next_position)
        )
    return statement


_KNOWN_ALIASES = sa.select(message_aliases.c.alias, message_aliases.c.message_id).where(
    message_aliases.c.thread_id == sa.bindparam("p_thread_id", type_=threads.c.id.type),
    message_aliases.c.alias.in_(sa.bindparam("p_names", expanding=True)),
)
_OLD_MESSAGE = sa.select(messages.c.run_id, messages.c.payload).where(
    messages.c.thread_id == sa.bindparam("p_thread_id", type_=messages.c.thread_id.type),
    messages.c.message_id == sa.bindparam("p_message_id", type_=messages.c.message_id.type),
)
_UPDATE_MESSAGE = (
    sa.update(messages)
    .where(
        messages.c.thread_id == sa.bindparam("p_thread_id", type_=messages.c.thread_id.type),
        messages.c.message_id == sa.bindparam("p_message_id", type_=messages.c.message_id.type),
    )
    .values(
        role=sa.bindparam("p_role", type_=messages.c.role.type),
        run_id=sa.bindparam("p_run_id", type_=messages.c.run_id.type),
        visibility=sa.bindparam("p_visibility", type_=messages.c.visibility.type),
        payload=sa.bindparam("p_payload", type_=messages.c.payload.type),
    )
)
_INSERT_MESSAGE = sa.insert(messages)
_SET_NEXT_POSITION = (
    sa.update(threads)
    .where(threads.c.id == sa.bindparam("p_thread_id", type_=threads.c.id.type))
    .values(next_position=sa.bindparam("p_position", type_=threads.c.next_position.type))
)


async def ensure_thread(conn: AsyncConnection, thread_id: str, now: datetime) -> None:
    """Create the thread row when missing."""
    dialect = conn.dialect.name
    statement = _ENSURE_THREAD.get(dialect)
    if statement is None:
        statement = _ENSURE_THREAD[dialect] = insert_ignore(dialect, threads, ["id"])
    await conn.execute(
        statement, {"id": thread_id, "next_position": 1, "created_at": now, "updated_at": now}
    )


async def _merge_continuation(
    conn: AsyncConnection, thread_id: str, message_id: str, row: dict[str, Any]
) -> None:
    """A run continuing another run's assistant message (AI SDK continuations reuse the
    messageId) keeps the earlier parts: ``parts`` = old parts + new parts."""
    old = (
        await conn.execute(_OLD_MESSAGE, {"p_thread_id": thread_id, "p_message_id": message_id})
    ).first()
    payload = row["payload"]
    if (
        old is not None
        and old.run_id is not None
        and old.run_id != row["run_id"]
        and isinstance(old.payload.get("parts"), list)
        and isinstance(payload.get("parts"), list)
    ):
        row["payload"] = {**payload, "parts": old.payload["parts"] + payload["parts"]}


def _row(item: JsonObject, run_id: str | None) -> dict[str, Any]:
    """An item's ``messages`` columns besides its keys, position and time."""
    return {
        "role": str(item.get("role", "assistant")),
        "run_id": run_id if run_id is not None else item.get("runId"),
        "visibility": visibility_mask(item),
        "payload": {k: v for k, v in item.items() if k != "aliases"},
    }


_INSERT_NEW_MESSAGE: dict[str, Any] = {}
"""Per dialect: ``INSERT INTO messages ... ON CONFLICT (thread_id, message_id) DO NOTHING
RETURNING position``, built once."""


async def _insert_new(
    conn: AsyncConnection,
    thread_id: str,
    item: JsonObject,
    run_id: str | None,
    now: datetime,
    position: int,
) -> bool:
    """A run's own item (``replace``) whose id the thread has no message for: inserted at
    ``position`` with its id and aliases (those already taken left as they are), without
    looking the aliases up first; False (nothing written) when the thread has a message of
    that id, which :func:`add_items` then updates in place (or refuses) as before. What the
    lookup would have decided for a new id is the same: insert, and register the names not
    known yet (an ``insert_ignore`` skips the known ones)."""
    dialect = conn.dialect.name
    statement = _INSERT_NEW_MESSAGE.get(dialect)
    if statement is None:
        insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
        statement = _INSERT_NEW_MESSAGE[dialect] = (
            insert(messages)
            .on_conflict_do_nothing(index_elements=["thread_id", "message_id"])
            .returning(messages.c.position)
        )
    message_id = str(item["id"])
    values = {"thread_id": thread_id, "message_id": message_id, "position": position}
    inserted = (
        await conn.execute(statement, {**values, "created_at": now, **_row(item, run_id)})
    ).first()
    if inserted is None:
        return False
    names = dict.fromkeys((message_id, *(str(a) for a in item.get("aliases") or ())))
    await conn.execute(
        _insert_aliases(dialect),
        [{"thread_id": thread_id, "alias": a, "message_id": message_id} for a in names],
    )
    return True


async def flush_rows(
    conn: AsyncConnection, pending: tuple[list[dict[str, Any]], list[dict[str, Any]]]
) -> None:
    """Insert the queued ``messages`` rows, then the queued alias rows (one multi-row
    statement each; emptied). :func:`add_items` decides on the names it has queued as on
    those stored, so this stores what one statement per item did (rows of one call collide
    only where one statement per item failed too: an ``IntegrityError`` either way, the
    transaction lost)."""
    rows, names = pending
    if rows:
        await conn.execute(_INSERT_MESSAGE, rows)
        rows.clear()
    if names:
        await conn.execute(_insert_aliases(conn.dialect.name), names)
        names.clear()


def _insert_aliases(dialect: str) -> Any:
    statement = _INSERT_ALIASES.get(dialect)
    if statement is None:
        statement = _INSERT_ALIASES[dialect] = insert_ignore(
            dialect, message_aliases, ["thread_id", "alias"]
        )
    return statement


async def add_items(
    conn: AsyncConnection,
    thread_id: str,
    items: Sequence[JsonObject],
    *,
    run_id: str | None,
    now: datetime,
    replace: bool,
    create: bool = False,
) -> int:
    """Insert history items at the end of the thread; returns how many rows were added.

    With ``replace`` (a run's own output) an item whose id is stored is updated in place
    (keeping its position; see :func:`_merge_continuation`); without it (input echoed by a
    client) an item whose id or alias is known is skipped. ``create``: create the thread row
    when missing (as :func:`ensure_thread` would first).

    The thread's ``next_position`` is moved past every item when it is locked, and set back
    to the end of the items added (one more statement) only when some item was not added.

    Raises:
        RunNotFoundError: the thread does not exist (and ``create`` is false).
    """
    reserve = len(items)
    params = {"p_thread_id": thread_id, "p_now": now, "p_reserve": reserve}
    lock = _upsert_thread(conn.dialect.name) if create else _LOCK_THREAD
    locked = (await conn.execute(lock, params)).first()
    if locked is None:
        raise RunNotFoundError(f"unknown thread {thread_id!r}")
    position = int(locked.next_position) - reserve
    if (
        replace
        and reserve == 1
        and await _insert_new(conn, thread_id, items[0], run_id, now, position)
    ):
        return 1
    return await add_locked(conn, thread_id, items, run_id, now, replace, position)


async def add_locked(
    conn: AsyncConnection,
    thread_id: str,
    items: Sequence[JsonObject],
    run_id: str | None,
    now: datetime,
    replace: bool,
    position: int,
) -> int:
    """:func:`add_items` once the thread is locked with ``len(items)`` positions reserved
    from ``position`` on."""
    reserve = len(items)
    known: dict[str, str] = {}
    if position > 1:  # a thread without messages (positions start at 1) has no aliases
        names: set[str] = set()
        for item in items:
            names.add(str(item["id"]))
            names.update(str(a) for a in item.get("aliases") or ())
        params = {"p_thread_id": thread_id, "p_names": sorted(names)}
        known = {r.alias: r.message_id for r in (await conn.execute(_KNOWN_ALIASES, params))}
    if not replace:
        rows, aliases, position = input_rows(thread_id, items, run_id, now, position, known)
        added = len(rows)
        await flush_rows(conn, (rows, aliases))  # (emptied)
    else:
        added, position = await _replace_items(conn, thread_id, items, run_id, now, position, known)
    if added != reserve:  # give back the positions of the items not added
        await set_next_position(conn, thread_id, position)
    return added


async def set_next_position(conn: AsyncConnection, thread_id: str, position: int) -> None:
    """Set the thread's next free position (positions reserved and not used given back)."""
    await conn.execute(_SET_NEXT_POSITION, {"p_thread_id": thread_id, "p_position": position})


def input_rows(
    thread_id: str,
    items: Sequence[JsonObject],
    run_id: str | None,
    now: datetime,
    position: int,
    known: dict[str, str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Client input (:func:`add_items` without ``replace``) as rows: the ``messages`` rows
    of the items whose id and aliases are unknown (``known``: name -> message id, grown with
    every item added, so an item repeating an earlier one is skipped too), from ``position``
    on, and their ``message_aliases`` rows; with the position after the last one. Pure: what
    the statements store is decided here (also for a group's creations,
    :mod:`gateway.store.create_sql`)."""
    rows: list[dict[str, Any]] = []
    aliases: list[dict[str, Any]] = []
    for item in items:
        message_id = str(item["id"])
        names = [str(a) for a in item.get("aliases") or ()]
        if any(a in known for a in (message_id, *names)):
            continue  # the client echoed a message the gateway already recorded
        rows.append(
            {
                "thread_id": thread_id,
                "message_id": message_id,
                "position": position,
                "created_at": now,
                **_row(item, run_id),
            }
        )
        position += 1
        fresh = list(dict.fromkeys((message_id, *names)))
        aliases.extend(
            {"thread_id": thread_id, "alias": a, "message_id": message_id} for a in fresh
        )
        known.update(dict.fromkeys(fresh, message_id))
    return rows, aliases, position


async def _replace_items(
    conn: AsyncConnection,
    thread_id: str,
    items: Sequence[JsonObject],
    run_id: str | None,
    now: datetime,
    position: int,
    known: dict[str, str],
) -> tuple[int, int]:
    """A run's own items (:func:`add_items` with ``replace``): an item whose id is stored is
    updated in place, the others inserted from ``position`` on; returns how many were added
    and the position after them."""
    pending: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])  # messages, aliases
    added = 0
    for item in items:
        message_id = str(item["id"])
        aliases = [str(a) for a in item.get("aliases") or ()]
        row = _row(item, run_id)
        if known.get(message_id) == message_id:
            await flush_rows(conn, pending)  # the update may read a message inserted just before
            await _merge_continuation(conn, thread_id, message_id, row)
            await conn.execute(
                _UPDATE_MESSAGE,
                {
                    "p_thread_id": thread_id,
                    "p_message_id": message_id,
                    "p_role": row["role"],
                    "p_run_id": row["run_id"],
                    "p_visibility": row["visibility"],
                    "p_payload": row["payload"],
                },
            )
        else:
            pending[0].append(
                {
                    "thread_id": thread_id,
                    "message_id": message_id,
                    "position": position,
                    "created_at": now,
                    **row,
                }
            )
            position += 1
            added += 1
        fresh = [a for a in dict.fromkeys((message_id, *aliases)) if a not in known]
        pending[1].extend(
            {"thread_id": thread_id, "alias": a, "message_id": message_id} for a in fresh
        )
        known.update(dict.fromkeys(fresh, message_id))
    await flush_rows(conn, pending)
    return added, position


OWN_ITEMS_MAX = 64
"""Most threads in one :func:`add_own_items` lock statement (one parameter each)."""

_LOCK_THREADS: dict[int, Any] = {}
""":func:`add_own_items`' lock of ``count`` threads (value rows: the
:func:`~gateway.store.sql_statements.padded_count` of the threads), built once per count."""

_INSERT_OWN: dict[str, Any] = {}
"""Per dialect: :func:`_insert_new`'s statement returning the key of each row inserted."""


def _lock_threads(count: int) -> Any:
    statement = _LOCK_THREADS.get(count)
    if statement is None:
        # the ids as ``(SELECT :t0 AS v_id UNION ALL ...) AS v``, as sql_writes.update_runs
        v = sa.union_all(
            *(
                sa.select(sa.bindparam(f"t{k}", type_=threads.c.id.type).label("v_id"))
                for k in range(count)
            )
        ).subquery("v")
        statement = _LOCK_THREADS[count] = (
            sa.update(threads)
            .where(threads.c.id == v.c.v_id)
            .values(
                updated_at=sa.bindparam("p_now", type_=threads.c.updated_at.type),
                next_position=threads.c.next_position + 1,
            )
            .returning(threads.c.id, threads.c.next_position)
        )
    return statement


async def add_own_items(
    conn: AsyncConnection, owned: Sequence[tuple[str, JsonObject, str]], now: datetime
) -> None:
    """``add_items(conn, thread_id, [item], run_id=run_id, now=now, replace=True)`` for each
    ``(thread_id, item, run_id)`` of distinct threads (the terminal writes of a group's runs),
    in three statements per :data:`OWN_ITEMS_MAX` threads: one ``UPDATE threads ... FROM``
    locking them all with a position each, one multi-row ``INSERT ... ON CONFLICT DO
    NOTHING`` of the messages, one of their aliases. An item whose id its thread already
    has is then updated in place as :func:`add_items` does. What it stores is what the calls
    one by one store (``tests/contracts/test_history_own_items.py``). Needs ``UPDATE ...
    FROM`` with ``RETURNING`` (PostgreSQL; SQLite 3.35+).

    Raises:
        ValueError: a thread twice. RunNotFoundError: a thread does not exist.
    """
    if len({thread_id for thread_id, _, _ in owned}) != len(owned):
        raise ValueError("add_own_items takes items of distinct threads")
    reserved: dict[str, int] = {}
    for start in range(0, len(owned), OWN_ITEMS_MAX):
        chunk = owned[start : start + OWN_ITEMS_MAX]
        params: dict[str, Any] = {"p_now": now}
        params.update({f"t{k}": thread_id for k, (thread_id, _, _) in enumerate(chunk)})
        size = padded_count(len(chunk), OWN_ITEMS_MAX)
        params.update({f"t{k}": None for k in range(len(chunk), size)})  # NULL: no thread
        for row in await conn.execute(_lock_threads(size), params):
            reserved[row.id] = int(row.next_position) - 1
    for thread_id, _, _ in owned:
        if thread_id not in reserved:
            raise RunNotFoundError(f"unknown thread {thread_id!r}")
    dialect = conn.dialect.name
    statement = _INSERT_OWN.get(dialect)
    if statement is None:
        insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
        statement = _INSERT_OWN[dialect] = (
            insert(messages)
            .on_conflict_do_nothing(index_elements=["thread_id", "message_id"])
            .returning(messages.c.thread_id)
        )
    rows = [
        {
            "thread_id": thread_id,
            "message_id": str(item["id"]),
            "position": reserved[thread_id],
            "created_at": now,
            **_row(item, run_id),
        }
        for thread_id, item, run_id in owned
    ]
    inserted = {row.thread_id for row in await conn.execute(statement, rows)}
    names = [
        {"thread_id": thread_id, "alias": alias, "message_id": str(item["id"])}
        for thread_id, item, _ in owned
        if thread_id in inserted
        for alias in dict.fromkeys((str(item["id"]), *(str(a) for a in item.get("aliases") or ())))
    ]
    if names:
        await conn.execute(_insert_aliases(dialect), names)
    for thread_id, item, run_id in owned:
        if thread_id not in inserted:  # its id is taken: as add_items after _insert_new
            await add_locked(conn, thread_id, [item], run_id, now, True, reserved[thread_id])


async def add_input(
    conn: AsyncConnection,
    thread_id: str,
    items: Sequence[JsonObject],
    now: datetime,
    *,
    run_id: str | None = None,
) -> int:
    """Client input: the thread row created when missing, then ``items`` added as
    :func:`add_items` without ``replace`` does (in the statement that creates or locks the
    thread); returns how many rows were added. No items: the thread row alone."""
    if not items:
        await ensure_thread(conn, thread_id, now)
        return 0
    return await add_items(
        conn, thread_id, items, run_id=run_id, now=now, replace=False, create=True
    )


async def history_page(
    conn: AsyncConnection, thread_id: str, *, limit: int, before_sequence: int | None
) -> HistoryPage:
    """The ``limit`` (clamped to 1..200) newest items before ``before_sequence``, oldest first."""
    limit = min(max(int(limit), 1), HISTORY_MAX_LIMIT)
    of_thread = messages.c.thread_id == thread_id
    total = int(
        (
            await conn.execute(sa.select(sa.func.count()).select_from(messages).where(of_thread))
        ).scalar_one()
    )
    query = sa.select(messages.c.position, messages.c.payload).where(of_thread)
    if before_sequence is not None:
        query = query.where(messages.c.position < before_sequence)
    rows = list((await conn.execute(query.order_by(messages.c.position.desc()).limit(limit))).all())
    rows.reverse()
    if not rows:
        return HistoryPage(total=total)
    start, end = int(rows[0].position), int(rows[-1].position)
    older = (
        await conn.execute(
            sa.select(messages.c.position).where(of_thread, messages.c.position < start).limit(1)
        )
    ).first()
    return HistoryPage(
        items=[{**r.payload, "sequence": int(r.position)} for r in rows],
        total=total,
        start_sequence=start,
        end_sequence=end,
        next_before_sequence=start if older is not None else None,
        has_more=older is not None,
    )
