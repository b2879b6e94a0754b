"""A group's whole SQLite transaction in one worker-thread call, on the raw ``sqlite3`` connection.

Issue 13 ("durability must be nearly free"): through SQLAlchemy's async engine every statement
of a group commit is a round trip to aiosqlite's worker thread (a queue put, the worker's step,
a future resolved on the event loop, :mod:`gateway.store.sqlite_one_hop`), plus ``BEGIN`` and
``COMMIT``, and SQLAlchemy's execution context per statement on the loop's thread. Here the
whole transaction of a group (:mod:`gateway.store.group_commit`) is **one** call on the
worker thread of a pooled aiosqlite connection (aiosqlite's ``Connection._execute``, the queue
its own methods use, aiosqlite 0.20-0.22): ``BEGIN IMMEDIATE``, every statement, ``COMMIT``
(``ROLLBACK`` when anything raised).

The statements stay the store's SQLAlchemy Core statements (``sql_writes``, ``history_sql``,
``answers_sql``, ``replicas_sql``), run by the same ``async`` step functions: they get a
:class:`RawConnection` instead of an ``AsyncConnection``, whose ``execute`` never suspends, so
the step's coroutine runs to its end inside the worker call (:func:`drive`). Each statement
is compiled for the engine's dialect once (cached by statement object and parameter keys, as
SQLAlchemy's compiled cache keys it) and its parameters are built as SQLAlchemy's
``DefaultExecutionContext._init_compiled`` builds them (SQLAlchemy 2.0-2.1,
``sqlalchemy/engine/default.py``): ``construct_params``, each value through its bind
processor, in ``positiontup`` order; expanding ``IN`` parameters through
``construct_expanded_state``. Rows come back through the result processors of the statement's
``exported_columns`` (datetimes aware UTC, JSON decoded, booleans), so a step sees what it saw
through SQLAlchemy (``tests/contracts/test_sqlite_raw.py`` checks the SQL text and parameters
against SQLAlchemy's and the stored rows of random groups against the SQLAlchemy path).

Errors: a ``sqlite3`` error is raised as SQLAlchemy's translation of it
(``sqlalchemy.exc.DBAPIError.instance``: ``IntegrityError``, ``OperationalError``, ...), so
the group committer's handling (a conflict reruns the group one by one; the rest becomes a
:class:`~gateway.store.errors.RunStoreError`) is unchanged. A statement this module cannot run
(Python-side column defaults, a schema translate map) raises :class:`RawUnsupported` before
anything of it is sent; the group committer then rolls back and runs the group through
SQLAlchemy.

The engine's events fire as SQLAlchemy's execution fires them, on the group's ``Connection``:
``begin``, ``before_cursor_execute`` / ``after_cursor_execute`` around each statement,
``handle_error`` when one fails, ``commit`` or ``rollback`` (from the worker thread), so the
store's metrics (:func:`gateway.store.engine.instrument`: ``agui_gateway_store_operation_seconds``
by verb) and whoever counts statements see every statement of a raw group.
"""

from __future__ import annotations

import re
import sqlite3
import weakref
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final

import sqlalchemy as sa

__all__ = ["RawConnection", "RawResult", "RawUnsupported", "drive", "run_transaction"]


class RawUnsupported(Exception):
    """A statement :class:`RawConnection` does not run (the group goes through SQLAlchemy)."""


def _verb(text: str) -> str:
    head = text.lstrip()[:16].split(None, 1)
    return head[0].upper() if head else "OTHER"


class _Row(tuple[Any, ...]):
    """A result row: by position, by attribute (``row.id``) and ``row._mapping["id"]``, the
    ways the store's steps read SQLAlchemy's ``Row``."""

    __slots__ = ()
    _keys: tuple[str, ...] = ()
    _index: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        try:
            return self[self._index[name]]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))


class RawResult:
    """The rows (all fetched) and ``rowcount`` of one statement, read as a SQLAlchemy
    ``CursorResult`` is by the store: ``first()``, ``one()``, ``all()``, ``scalar_one()``,
    iteration."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def __iter__(self) -> Any:
        return iter(self._rows)

    def all(self) -> list[Any]:
        """Every row."""
        return list(self._rows)

    def first(self) -> Any:
        """The first row, or None."""
        return self._rows[0] if self._rows else None

    def one(self) -> Any:
        """The only row.

        Raises:
            sqlalchemy.exc.NoResultFound, sqlalchemy.exc.MultipleResultsFound: not one row.
        """
        if not self._rows:
            raise sa.exc.NoResultFound("No row was found when one was required")
        if len(self._rows) > 1:
            raise sa.exc.MultipleResultsFound("Multiple rows were found when one was required")
        return self._rows[0]

    def scalar_one(self) -> Any:
        """The first column of :meth:`one`."""
        return self.one()[0]


class _Prepared:
    """One statement compiled for a dialect, with what turns parameters into the driver's
    tuple and rows into :class:`_Row`."""

    __slots__ = (
        "compiled",
        "expanding",
        "multi_values",
        "processors",
        "required",
        "results",
        "row_type",
        "slots",
        "statement",
        "text",
        "verb",
    )

    def __init__(
        self, statement: Any, dialect: sa.Dialect, keys: Sequence[str], many: bool = False
    ) -> None:
        compiled: Any = statement.compile(
            dialect=dialect, column_keys=list(keys), for_executemany=many
        )
        if compiled.insert_prefetch or compiled.update_prefetch or compiled.schema_translate_map:
            raise RawUnsupported(f"statement needs SQLAlchemy's execution: {compiled.string}")
        if not compiled.positional:
            raise RawUnsupported("a dialect with named parameters")
        self.statement = statement  # held: its id is the cache key
        self.compiled = compiled
        self.text: str = compiled.string
        self.verb = _verb(self.text)
        self.processors: dict[str, Any] = dict(compiled._bind_processors)
        self.expanding = bool(compiled.literal_execute_params or compiled.post_compile_params)
        self.slots, self.required = _slots(compiled, self.processors, self.expanding)
        columns = list(getattr(statement, "exported_columns", ()) or ())
        self.results: list[Any] = [
            column.type.dialect_impl(dialect).result_processor(dialect, None) for column in columns
        ]
        names = [
            str(getattr(column, "key", None) or getattr(column, "name", "")) for column in columns
        ]
        self.multi_values = _values_clause(compiled)
        self.row_type: type[_Row] = type(
            "Row", (_Row,), {"__slots__": (), "_keys": tuple(names), "_index": _index(names)}
        )

    def bind(self, params: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
        """The SQL text and the driver's parameter tuple for ``params``.

        Raises:
            sqlalchemy.exc.InvalidRequestError: a required parameter is missing (as
                SQLAlchemy's ``construct_params`` raises).
        """
        slots = self.slots
        if slots is not None and self.required.issubset(params):
            # construct_params' choice per parameter (its key, its name, else the value the
            # statement binds), precomputed; then its bind processor
            values = []
            for key, name, default, process in slots:
                value = params[key] if key in params else params.get(name, default)
                values.append(value if process is None else process(value))
            return self.text, tuple(values)
        compiled = self.compiled
        processors = self.processors
        if self.expanding:
            state = compiled.construct_expanded_state(params, escape_names=False)
            processors = {**processors, **state.processors}
            found, positions, text = state.parameters, state.positiontup, state.statement
        else:
            found = compiled.construct_params(params, escape_names=False)
            positions, text = compiled.positiontup, self.text
        return text, tuple(
            processors[key](found[key]) if key in processors else found[key] for key in positions
        )

    def one_by_one(self, bound: list[tuple[str, tuple[Any, ...]]]) -> bool:
        """Whether parameter sets must run one by one: a statement returning rows
        (``sqlite3``'s ``executemany`` drops them) or one whose text depends on its values."""
        return bool(self.results) or self.expanding or len({text for text, _ in bound}) > 1

    def rows(self, raw: list[Any]) -> list[Any]:
        """``raw`` (``sqlite3`` tuples) through the result processors."""
        results = self.results
        make = self.row_type
        if len(results) != (len(raw[0]) if raw else len(results)):
            raise RawUnsupported(f"unexpected result columns of {self.text}")
        if not any(results):
            return [make(row) for row in raw]
        return [
            make(
                value if process is None else process(value)
                for process, value in zip(results, row, strict=True)
            )
            for row in raw
        ]


_Slot = tuple[str, str, Any, Any]
"""A positional parameter: its bind's key, its name, the value the statement binds, and its
bind processor (or None)."""


def _slots(
    compiled: Any, processors: dict[str, Any], expanding: bool
) -> tuple[list[_Slot] | None, frozenset[str]]:
    """How ``construct_params`` fills each positional parameter (SQLAlchemy 2.0-2.1
    ``SQLCompiler.construct_params``: the parameter given by the bind's key, else by its name,
    else the bound value), once per statement, and the keys of the required binds; None when
    the statement's text depends on its values (expanding) or a bind computes its value
    (``callable_``): those go through ``construct_params`` each time."""
    binds = {name: bind for bind, name in compiled.bind_names.items()}
    if expanding or any(bind.callable is not None for bind in binds.values()):
        return None, frozenset()
    if any(name not in binds for name in compiled.positiontup or ()):
        return None, frozenset()
    defaults = compiled.construct_params(None, escape_names=False, _check=False)
    slots = [
        (binds[name].key, name, defaults.get(name), processors.get(name))
        for name in compiled.positiontup or ()
    ]
    return slots, frozenset(bind.key for bind in binds.values() if bind.required)


def _values_clause(compiled: Any) -> str | None:
    """The ``VALUES (...)`` of a single-row ``INSERT ... RETURNING`` whose parameters are only
    that clause's, when SQLAlchemy would run a list of rows as one multi-row statement
    ("insertmanyvalues", SQLAlchemy 2.0 ``SQLCompiler._insertmanyvalues``); else None."""
    plan = getattr(compiled, "_insertmanyvalues", None)
    if plan is None or plan.has_upsert_bound_parameters or plan.embed_values_counter:
        return None
    clause = f"VALUES ({plan.single_values_expr})"
    if compiled.string.count(clause) != 1:
        return None
    if len(compiled.positiontup or ()) != plan.num_positional_params_counted:
        return None
    return clause


_MULTI_VALUES_PARAMS: Final[int] = 32_000
"""Most parameters in one multi-row ``INSERT`` (SQLite allows 32,766 since 3.32)."""


def _index(names: Sequence[str]) -> dict[str, int]:
    index: dict[str, int] = {}
    for position, name in enumerate(names):
        index.setdefault(name, position)
    return index


_CACHE_MAX: Final[int] = 512
"""Compiled statements kept per dialect; past it the cache starts over (the store's hot
statements are built once; a statement built per call, such as a rejection's lookup, would
otherwise grow it without bound)."""

_CACHES: weakref.WeakKeyDictionary[
    sa.Dialect, dict[tuple[int, tuple[str, ...], bool], _Prepared]
] = weakref.WeakKeyDictionary()


def _multi_values(
    clause: str, bound: list[tuple[str, tuple[Any, ...]]]
) -> list[tuple[str, tuple[Any, ...]]]:
    """Single-row ``INSERT``s (the same text) as multi-row ones: ``VALUES (...), (...)``,
    their parameters in row order, at most :data:`_MULTI_VALUES_PARAMS` each, in chunks of a
    power of two rows (:func:`_chunk_sizes`: few distinct texts for ``sqlite3``'s statement
    cache)."""
    text = bound[0][0]
    head, tail = text.split(clause)
    single = clause[len("VALUES ") :]
    out = []
    start = 0
    for size in _chunk_sizes(len(bound), max(1, len(bound[0][1]))):
        chunk = bound[start : start + size]
        start += size
        values = ", ".join([single] * size)
        out.append((f"{head}VALUES {values}{tail}", tuple(v for _, row in chunk for v in row)))
    return out


def _chunk_sizes(rows: int, per_row: int) -> list[int]:
    """``rows`` split into powers of two, largest first, none over 1,024 rows or
    :data:`_MULTI_VALUES_PARAMS` parameters (37 rows: 32, 4, 1)."""
    most = 1
    while most * 2 <= min(1024, _MULTI_VALUES_PARAMS // per_row):
        most *= 2
    sizes = []
    while rows:
        size = min(most, 1 << (rows.bit_length() - 1))
        sizes.append(size)
        rows -= size
    return sizes


_PLAIN_VALUES: Final = re.compile(r"VALUES \((?:\?, )*\?\)")
"""The one ``VALUES (?, ...)`` of a plain ``INSERT`` the driver would run once per row."""


def _at_once(text: str, rows: list[Any]) -> list[tuple[str, tuple[Any, ...]]] | None:
    """An ``executemany`` of a plain ``INSERT`` (one ``VALUES (?, ...)``, no ``RETURNING``)
    as a few multi-row statements (:func:`_multi_values`), or None (run it as it is).

    Why (issue 13): ``sqlite3``'s ``executemany`` releases the GIL around every row's step
    (CPython 3.11 ``Modules/_sqlite/cursor.c``, ``pysqlite_step``) and must win it back each
    time; while the event loop's thread runs Python, each such hand-over waits for its switch
    interval (up to 5 ms, ``sys.getswitchinterval``), so a group's few hundred rows could hold
    its transaction, and every write waiting behind it, for tens of milliseconds. One
    statement per chunk hands the GIL over once per chunk."""
    if len(rows) < 2 or not text.startswith("INSERT") or "RETURNING" in text:
        return None
    found = _PLAIN_VALUES.findall(text)
    if len(found) != 1:
        return None
    return _multi_values(found[0], [(text, tuple(row)) for row in rows])


def _prepared(
    statement: Any, dialect: sa.Dialect, keys: tuple[str, ...], many: bool = False
) -> _Prepared:
    cache = _CACHES.get(dialect)
    if cache is None:
        cache = _CACHES[dialect] = {}
    key = (id(statement), keys, many)
    found = cache.get(key)
    if found is None or found.statement is not statement:
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        try:
            found = _Prepared(statement, dialect, keys, many)
        except (AttributeError, TypeError) as exc:
            # a SQLAlchemy release without the compiler internals read here (checked on
            # 2.0 and 2.1): the group goes through SQLAlchemy instead of failing
            raise RawUnsupported(f"cannot prepare {statement}: {exc}") from exc
        cache[key] = found
    return found


class RawConnection:
    """What the store's write steps use of an ``AsyncConnection`` (``execute``,
    ``exec_driver_sql``, ``dialect``), over a raw ``sqlite3`` connection on the thread that
    owns it. Its coroutines never suspend: :func:`drive` runs a step built on it to its end.

    Args:
        raw: the ``sqlite3`` connection, in a transaction the caller owns.
        dialect: the engine's dialect (its bind and result processors, JSON serializer).
        events: the SQLAlchemy ``Connection`` whose cursor events each statement fires
            (None: none).
    """

    __slots__ = ("dialect", "events", "raw")

    def __init__(
        self, raw: sqlite3.Connection, dialect: sa.Dialect, events: sa.Connection | None = None
    ) -> None:
        self.raw = raw
        self.dialect = dialect
        self.events = events

    async def execute(self, statement: Any, parameters: Any = None) -> RawResult:
        """Run a SQLAlchemy Core statement with a dict of parameters, or a list of them
        (``executemany``; a statement returning rows runs once per dict).

        Raises:
            sqlalchemy.exc.DBAPIError subclasses: ``sqlite3`` refused it.
            RawUnsupported: the statement needs SQLAlchemy's execution (nothing was sent).
        """
        many = isinstance(parameters, list)
        sets: list[dict[str, Any]] = parameters if many else [parameters or {}]
        if not sets:
            return RawResult([], 0)
        keys = tuple(sorted(sets[0]))
        prepared = _prepared(statement, self.dialect, keys, many and len(sets) > 1)
        bound = [prepared.bind(params) for params in sets]
        if len(bound) > 1 and not prepared.one_by_one(bound):
            return self._run(prepared.verb, bound[0][0], [values for _, values in bound], prepared)
        if len(bound) > 1 and prepared.multi_values is not None:
            bound = _multi_values(prepared.multi_values, bound)
        rows: list[Any] = []
        count = 0
        for text, values in bound:
            result = self._run(prepared.verb, text, values, prepared)
            rows += result._rows
            count += max(result.rowcount, 0)
        return RawResult(rows, count)

    async def exec_driver_sql(self, text: str, parameters: Any = None) -> RawResult:
        """Run SQL text as is: a list of tuples is an ``executemany``.

        Raises:
            sqlalchemy.exc.DBAPIError subclasses: ``sqlite3`` refused it.
        """
        return self._run(_verb(text), text, parameters if parameters is not None else (), None)

    def _run(self, verb: str, text: str, values: Any, prepared: _Prepared | None) -> RawResult:
        many = isinstance(values, list)
        if many:
            chunks = _at_once(text, values)
            if chunks is not None:
                count = 0
                for chunk_text, chunk_values in chunks:
                    count += max(self._run(verb, chunk_text, chunk_values, None).rowcount, 0)
                return RawResult([], count)
        events = self.events
        cursor = self.raw.cursor()
        try:
            if events is not None:
                events.dispatch.before_cursor_execute(events, cursor, text, values, None, many)
            try:
                if many:
                    cursor.executemany(text, values)
                    rows: list[Any] = []
                else:
                    cursor.execute(text, values)
                    rows = cursor.fetchall() if cursor.description else []
            except sqlite3.Error as exc:
                error = sa.exc.DBAPIError.instance(text, values, exc, sqlite3.Error)
                if events is not None:
                    events.dialect.dispatch.handle_error(_Failure(events, text, values, exc, error))
                raise error from exc
            if events is not None:
                events.dispatch.after_cursor_execute(events, cursor, text, values, None, many)
            rowcount = cursor.rowcount
        finally:
            cursor.close()
        if prepared is not None and rows:
            rows = prepared.rows(rows)
        return RawResult(rows, rowcount)


class _Failure:
    """What a ``handle_error`` listener reads of SQLAlchemy's ``ExceptionContext``."""

    __slots__ = (
        "chained_exception",
        "connection",
        "dialect",
        "engine",
        "execution_context",
        "invalidate_pool_on_disconnect",
        "is_disconnect",
        "is_pre_ping",
        "original_exception",
        "parameters",
        "sqlalchemy_exception",
        "statement",
    )

    def __init__(
        self, connection: sa.Connection, statement: str, parameters: Any, orig: Any, error: Any
    ) -> None:
        self.connection = connection
        self.engine = connection.engine
        self.dialect = connection.dialect
        self.statement = statement
        self.parameters = parameters
        self.original_exception = orig
        self.sqlalchemy_exception = error
        self.chained_exception = None
        self.execution_context = None
        self.is_disconnect = False
        self.invalidate_pool_on_disconnect = False
        self.is_pre_ping = False


def drive(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coroutine`` to its end in this thread and return its result; it must not
    suspend (its awaits are :class:`RawConnection` calls, which return at once).

    Raises:
        RuntimeError: it suspended (it awaited something of an event loop).
        Whatever the coroutine raised.
    """
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a raw SQLite step awaited something other than its connection")


def run_transaction(
    raw: sqlite3.Connection,
    dialect: sa.Dialect,
    events: sa.Connection | None,
    body: Callable[[RawConnection], Coroutine[Any, Any, Any]],
) -> Any:
    """On the thread that owns ``raw``: ``BEGIN IMMEDIATE``, ``body(connection)`` driven to
    its end (:func:`drive`), ``COMMIT``; ``ROLLBACK`` when anything raised (re-raised).
    ``events``: see :class:`RawConnection` (``begin``, ``commit``, ``rollback`` too).
    ``IMMEDIATE`` takes SQLite's write lock at once (waiting up to the connection's
    ``busy_timeout``), so no statement of the group meets a lock it cannot wait for.

    Raises:
        RawUnsupported: ``raw`` is in a transaction already (an in-memory database shares
            one connection with every caller; nothing was sent), or a statement of ``body``
            needs SQLAlchemy's execution (rolled back).
        sqlite3.Error: ``BEGIN`` or ``COMMIT`` failed; what ``body`` raised.
    """
    if raw.in_transaction:  # an in-memory database's one connection, mid-transaction
        raise RawUnsupported("the connection is in a transaction of another caller")
    if events is not None:
        events.dispatch.begin(events)
    raw.execute("BEGIN IMMEDIATE")
    try:
        out = drive(body(RawConnection(raw, dialect, events)))
        if events is not None:
            events.dispatch.commit(events)
        raw.commit()
    except BaseException:
        if raw.in_transaction:
            if events is not None:
                events.dispatch.rollback(events)
            raw.rollback()
        raise
    return out
