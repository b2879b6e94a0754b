"""Errors raised by the run store, the broker and the run core.

Every error carries ``code`` (stable SCREAMING_CASE) and ``status`` (the HTTP status the HTTP
layer should answer with when the error reaches a request), the way h11's errors carry their
hint::

    RunStoreError                      500 STORE_ERROR
    ├── StoreUnavailableError          503 STORE_UNAVAILABLE   the database cannot be reached
    ├── RunNotFoundError               404 RUN_NOT_FOUND       no run with that id
    ├── RunExistsError                 409 RUN_EXISTS          create_run with a used id
    ├── InterruptAnsweredError         409 INTERRUPT_ANSWERED  a resume[] entry answers an
    │                                                          interrupt another run answered
    ├── CursorError                    400 INVALID_CURSOR      a Last-Event-ID the run cannot use
    │   ├── InvalidCursorError             not of the form ``<epoch>.<seq>``
    │   └── CursorMismatchError            well formed, but names no event of this run
    └── WriteRejectedError             409 WRITE_REJECTED      an append the run does not accept
        ├── StaleEpochError                the writer's epoch was fenced by a takeover
        ├── RunClosedError                 the run already ended
        └── SequenceError                  seqs not contiguous after the run's last seq

Database driver errors are translated into :class:`RunStoreError` at one place
(:mod:`gateway.store.sql`), chained with ``from``.
"""

from __future__ import annotations

__all__ = [
    "CursorError",
    "CursorMismatchError",
    "InterruptAnsweredError",
    "InvalidCursorError",
    "RunClosedError",
    "RunExistsError",
    "RunNotFoundError",
    "RunStoreError",
    "SequenceError",
    "StaleEpochError",
    "StoreUnavailableError",
    "WriteRejectedError",
]


class RunStoreError(Exception):
    """Base class of the durable-run errors.

    Attributes:
        message: one-line human-readable description (safe to show to a client).
        code: stable machine-readable code.
        status: HTTP status the HTTP layer answers with.
    """

    code: str = "STORE_ERROR"
    status: int = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StoreUnavailableError(RunStoreError):
    """The database cannot be reached (connection refused, reset or timed out): transient.

    Raised for the driver's ``OSError`` / ``TimeoutError`` (asyncpg lets them through when a
    connection cannot be made) and for SQLAlchemy's disconnect errors. Writers retry it with
    backoff; readers end with RUN_ERROR ``STORE_UNAVAILABLE``; HTTP answers 503.
    """

    code = "STORE_UNAVAILABLE"
    status = 503


class RunNotFoundError(RunStoreError):
    """No run has this id (or it was purged by retention)."""

    code = "RUN_NOT_FOUND"
    status = 404


class RunExistsError(RunStoreError):
    """``create_run`` was given a run id that is already used."""

    code = "RUN_EXISTS"
    status = 409


class InterruptAnsweredError(RunStoreError):
    """``create_run`` was given answers (``RunAgentInput.resume[]`` entries) to interrupts of the
    thread that another run already answered: an interrupt is claimed once, so a second answer
    is refused and no second continuation starts (issue 11 kind 7, ``docs/runs.md`` §7).

    Attributes:
        interrupt_ids: the interrupt ids already answered, in the order given.
    """

    code = "INTERRUPT_ANSWERED"
    status = 409

    def __init__(self, message: str, *, interrupt_ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.interrupt_ids = interrupt_ids


class CursorError(RunStoreError):
    """A resume cursor (``Last-Event-ID`` / ``?lastEventId=``) that cannot be used for the run."""

    code = "INVALID_CURSOR"
    status = 400


class InvalidCursorError(CursorError):
    """The cursor text is not ``<epoch>.<seq>`` with two positive decimal integers."""


class CursorMismatchError(CursorError):
    """The cursor is well formed but does not belong to this run (epoch or seq out of range)."""


class WriteRejectedError(RunStoreError):
    """An append or status change the run does not accept; the producer must stop."""

    code = "WRITE_REJECTED"
    status = 409


class StaleEpochError(WriteRejectedError):
    """The producer's epoch is older than the run's: another replica took the run over."""


class RunClosedError(WriteRejectedError):
    """The run already has a terminal status; nothing may be appended."""


class SequenceError(WriteRejectedError):
    """The batch's seqs do not continue the run's last seq by steps of one."""
