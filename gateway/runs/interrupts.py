"""Which interrupts a ``RunAgentInput.resume[]`` may answer (issue 11 kind 7, ``docs/runs.md`` §7).

An interrupt is raised by a run ending with RUN_FINISHED ``outcome: {type: "interrupt",
interrupts: [{id, reason, toolCallId?, ...}]}`` (AG-UI 1.0 ``RunFinishedInterruptOutcome``),
and answered by the next run of the thread, whose ``resume[]`` entries name the ids
(``docs/concepts/interrupts.mdx`` of ag-ui-protocol/ag-ui, contract rules 2 and 5; ``@ag-ui/client``
1.0.0 keeps ``pendingInterrupts`` from the last RUN_FINISHED only). Before anything is recorded,
claimed or sent upstream, :func:`check_resume` refuses, in this order:

=========================================  ==================================================
the entries                                refusal
=========================================  ==================================================
two entries with one ``interruptId``       422 ``INVALID_REQUEST`` (each interrupt is answered
                                           once; ``buildResumeArray`` gives one per interrupt)
an interrupt another run answered          409 ``INTERRUPT_ANSWERED``
                                           (:class:`~gateway.store.InterruptAnsweredError`)
an interrupt an older run raised, a later  409 ``INTERRUPT_SUPERSEDED``: no longer open
run of the thread since started            (:class:`~gateway.errors.InterruptSupersededError`)
an interrupt no run of the thread raised   422 ``UNKNOWN_INTERRUPT``
(among its :data:`RUNS_LOOKED_AT` newest)  (:class:`~gateway.errors.UnknownInterruptError`)
=========================================  ==================================================

A status other than ``resolved`` / ``cancelled`` never gets here: the ``RunAgentInput`` schema
refuses it (422 ``INVALID_REQUEST``; ``ag_ui.core.ResumeEntry``, ``@ag-ui/core`` 1.0
``ResumeEntrySchema`` ``z.enum(["resolved", "cancelled"])``). A request whose run id the
thread already has skips the checks: it is a retry, which the store answers ``RUN_EXISTS``
(the AG-UI endpoint re-joins it). These are checks before the claim, not the claim: two
requests answering one interrupt at once are told apart by the store's compare-and-set
(:meth:`gateway.store.RunStore.create_run`). The thread is read first and the answers after,
so a run the read saw has its claims (one commit) seen too: answered wins over superseded.

The open interrupts' ``toolCallId`` (:attr:`ResumeCheck.calls`) let a request builder put an
approval on the right tool part (``agui_codecs.protocols._resume``), and their ``metadata``
(:attr:`ResumeCheck.metadata`, the same read) let the OpenAI Responses builder rebuild the
``mcp_approval_request`` item an ``mcp_approval_response`` answers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ag_ui.core import RunAgentInput

from ..errors import InterruptSupersededError, InvalidRequestError, UnknownInterruptError
from ..store import Cursor, InterruptAnsweredError, RunNotFoundError, RunRecord, RunStore
from ..types import JsonObject

__all__ = ["RUNS_LOOKED_AT", "ResumeCheck", "check_resume", "raised_interrupts"]

RUNS_LOOKED_AT: Final = 20
"""The thread's newest runs searched for the interrupts a ``resume[]`` names: an id raised
only by an older run is refused as ``UNKNOWN_INTERRUPT`` (it is not open either way)."""


@dataclass(frozen=True, slots=True)
class ResumeCheck:
    """What the thread raised, for the ``resume[]`` ids asked about.

    Attributes:
        open: ``{interruptId: Interrupt}`` (wire dicts) of the thread's newest run, when it
            ended with an interrupt outcome: the interrupts a ``resume[]`` may answer.
        raised_before: ``{interruptId: Interrupt}`` of the asked-about ids an older run raised
            (the newest such run's), which a later run has superseded.
    """

    open: Mapping[str, JsonObject] = field(default_factory=dict)
    raised_before: Mapping[str, JsonObject] = field(default_factory=dict)

    @property
    def calls(self) -> dict[str, str]:
        """``{interruptId: toolCallId}`` of the interrupts found carrying a ``toolCallId`` (the
        open ones', and the superseded ones' a retry of their answering run may need)."""
        out: dict[str, str] = {}
        for interrupt_id, interrupt in {**self.raised_before, **self.open}.items():
            call_id = interrupt.get("toolCallId")
            if isinstance(call_id, str) and call_id:
                out[interrupt_id] = call_id
        return out

    @property
    def metadata(self) -> dict[str, JsonObject]:
        """``{interruptId: metadata}`` of the interrupts found carrying a ``metadata`` object
        (the same ones as :attr:`calls`), from which the OpenAI Responses builder rebuilds the
        ``mcp_approval_request`` item a stateless request must hold
        (``agui_codecs.protocols.openai_responses._approvals``)."""
        out: dict[str, JsonObject] = {}
        for interrupt_id, interrupt in {**self.raised_before, **self.open}.items():
            metadata = interrupt.get("metadata")
            if isinstance(metadata, dict):
                out[interrupt_id] = metadata
        return out


async def _interrupts_of(store: RunStore, run: RunRecord) -> dict[str, JsonObject]:
    """The interrupts of ``run``'s last event when it is RUN_FINISHED ``outcome: interrupt``."""
    if run.last_seq == 0:
        return {}
    after = Cursor(run.last_epoch, run.last_seq - 1) if run.last_seq > 1 else None
    last = await store.read_wire(run.id, after=after, limit=1)
    if not last or last[0].event.get("type") != "RUN_FINISHED":
        return {}
    outcome = last[0].event.get("outcome")
    if not isinstance(outcome, dict) or outcome.get("type") != "interrupt":
        return {}
    out: dict[str, JsonObject] = {}
    for interrupt in outcome.get("interrupts") or []:
        if isinstance(interrupt, dict) and isinstance(interrupt.get("id"), str):
            out.setdefault(interrupt["id"], interrupt)
    return out


async def raised_interrupts(
    store: RunStore, runs: Sequence[RunRecord], ids: Collection[str]
) -> ResumeCheck:
    """The open interrupts of a thread whose runs are ``runs`` (newest first) and which of
    ``ids`` older runs raised: the newest run's interrupts are open, an older run's are
    superseded; the search stops once every one of ``ids`` is placed, and after
    :data:`RUNS_LOOKED_AT` runs.

    Args:
        store: the run store.
        runs: the thread's newest runs, newest first (``RunStore.list_runs``), without the
            request's own.
        ids: the ``interruptId`` values asked about.
    """
    if not runs:
        return ResumeCheck()
    opened = await _interrupts_of(store, runs[0])
    left = set(ids) - opened.keys()
    before: dict[str, JsonObject] = {}
    for run in runs[1:RUNS_LOOKED_AT]:
        if not left:
            break
        raised = await _interrupts_of(store, run)
        for interrupt_id in left & raised.keys():
            before[interrupt_id] = raised[interrupt_id]
        left -= before.keys()
    return ResumeCheck(open=opened, raised_before=before)


async def _is_retry(store: RunStore, run_key: str, newest: Sequence[RunRecord]) -> bool:
    """Whether the thread already has run ``run_key`` (``newest``: its newest runs, a list
    that is complete when shorter than asked)."""
    if any(run.id == run_key for run in newest):
        return True
    if len(newest) <= RUNS_LOOKED_AT:
        return False
    try:
        await store.get_run(run_key)
    except RunNotFoundError:
        return False
    return True


def _duplicates(ids: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in ids if ids.count(i) > 1))


def _names(ids: tuple[str, ...]) -> str:
    return ", ".join(map(repr, ids))


async def check_resume(
    store: RunStore, thread_key: str, run_key: str, run_input: RunAgentInput
) -> ResumeCheck:
    """Refuse a ``run_input.resume[]`` that answers an interrupt twice, or one that is not open
    (module table), before anything is recorded or sent; otherwise what the thread raised.

    Args:
        store: the run store.
        thread_key: the thread's store key; ``run_key``: the request's run key
            (:mod:`gateway.tenancy`).
        run_input: the request (its ``resume[]``).

    Returns:
        What the thread raised (:attr:`ResumeCheck.calls` for the request builders), also for
        a retry of an existing run, which is not refused here (the store answers it
        ``RUN_EXISTS``).

    Raises:
        InvalidRequestError: 422 ``INVALID_REQUEST``, two entries name one interrupt.
        InterruptAnsweredError: 409 ``INTERRUPT_ANSWERED``, another run answered one.
        InterruptSupersededError: 409 ``INTERRUPT_SUPERSEDED``, one is of a superseded run.
        UnknownInterruptError: 422 ``UNKNOWN_INTERRUPT``, the thread never raised one.
    """
    ids = [entry.interrupt_id for entry in run_input.resume or []]
    thread = run_input.thread_id
    twice = _duplicates(ids)
    if twice:
        raise InvalidRequestError(
            f"resume[] answers interrupt {_names(twice)} more than once; an interrupt is "
            "answered by one entry",
            detail={"interruptIds": list(twice)},
        )
    newest = await store.list_runs(thread_key, limit=RUNS_LOOKED_AT + 1)
    others = [run for run in newest if run.id != run_key]
    raised = await raised_interrupts(store, others, ids)
    if await _is_retry(store, run_key, newest):
        return raised  # RUN_EXISTS (the AG-UI endpoint's re-join) decides, not the answers
    answered = await store.answered_interrupts(thread_key, ids)  # after: see the module
    taken = tuple(i for i in ids if answered.get(i, run_key) != run_key)
    if taken:
        raise InterruptAnsweredError(
            f"interrupt {_names(taken)} of thread {thread!r} was answered by another run",
            interrupt_ids=taken,
        )
    gone = tuple(i for i in ids if i not in raised.open and i in raised.raised_before)
    if gone:
        raise InterruptSupersededError(
            f"interrupt {_names(gone)} of thread {thread!r} is no longer open: a later run of "
            "the thread started without answering it",
            interrupt_ids=gone,
        )
    unknown = tuple(i for i in ids if i not in raised.open)
    if unknown:
        raise UnknownInterruptError(
            f"interrupt {_names(unknown)} was never raised on thread {thread!r}: a resume[] "
            "entry answers an interrupt of the thread's last run (RUN_FINISHED outcome "
            "interrupt)",
            interrupt_ids=unknown,
        )
    return raised
