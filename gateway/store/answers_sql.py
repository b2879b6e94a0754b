"""SQL of the interrupt answers (used by :class:`~gateway.store.sql.SqlRunStore`): the
``interrupt_answers`` table, where an interrupt of a thread is claimed once.

The claim is the insert itself: the primary key ``(thread_id, interrupt_id)`` is the
compare-and-set, so of competing runs answering one interrupt exactly one commits its row
(PostgreSQL makes the others wait on the key and fail; SQLite serialises the writers), and a
conflict is an ``IntegrityError`` that rolls the whole ``create_run`` back: no run is recorded
for a refused answer (``docs/runs.md`` §7).

Every function takes an open connection; the caller owns the transaction and the translation of
driver errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .schema import interrupt_answers

__all__ = ["Answer", "answered", "claim"]

Answer = tuple[str, str]
"""An interrupt answer: ``(interruptId, status)``, status ``resolved`` or ``cancelled`` (AG-UI
1.0 ``ResumeEntry``)."""


async def claim(
    conn: AsyncConnection,
    thread_id: str,
    run_id: str,
    answers: Sequence[Answer],
    now: datetime,
) -> None:
    """Insert one row per answer (the thread row must exist). Raises ``IntegrityError`` when an
    interrupt of the thread is already answered (or named twice in ``answers``)."""
    if not answers:
        return
    await conn.execute(
        sa.insert(interrupt_answers),
        [
            {
                "thread_id": thread_id,
                "interrupt_id": interrupt_id,
                "run_id": run_id,
                "status": status,
                "created_at": now,
            }
            for interrupt_id, status in answers
        ],
    )


async def answered(
    conn: AsyncConnection, thread_id: str, interrupt_ids: Sequence[str]
) -> dict[str, str]:
    """``{interruptId: runId}`` of those of ``interrupt_ids`` the thread has answered."""
    if not interrupt_ids:
        return {}
    rows = (
        await conn.execute(
            sa.select(interrupt_answers.c.interrupt_id, interrupt_answers.c.run_id).where(
                interrupt_answers.c.thread_id == thread_id,
                interrupt_answers.c.interrupt_id.in_(sorted(set(interrupt_ids))),
            )
        )
    ).all()
    return {str(interrupt_id): str(run_id) for interrupt_id, run_id in rows}
