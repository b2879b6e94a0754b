"""Tenants and the store keys of their threads and runs (issue 15 §2).

A thread belongs to the tenant that created it, and a run to its thread: the store keys both by
everything that scopes them, so two tenants' ``t1`` are two threads, and ``r1`` on thread
``t1`` and ``r1`` on thread ``t2`` are two runs. A caller can only ever name keys of its own
tenant, so a foreign thread or run is, for it, exactly a missing one (404), and a run id taken
on another thread reveals nothing::

    thread_key(None, "t1")            == "t1"                 no tenancy (auth off)
    thread_key("acme", "t1")          == "acme\\x1ft1"
    run_key(None, "t1", "r1")         == "t1\\x1fr1"
    run_key("acme", "t1", "r1")       == "acme\\x1ft1\\x1fr1"
    public_id("acme\\x1ft1\\x1fr1")    == "r1"

The separator ``U+001F`` is a control character, which no id accepted at the edge
(:mod:`gateway.ids`) nor any tenant name (:data:`TENANT_PATTERN`) holds, so keys never
collide and the public id is the part after the last separator. With ids of at most
:data:`~gateway.ids.MAX_ID_LENGTH` characters and tenants of at most :data:`MAX_TENANT_LENGTH`
every key fits the store's 255-character columns. Runs recorded before tenancy (a key without
separator) keep their id as public id.

A neutral module: it imports nothing of the gateway.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "KEY_SEPARATOR",
    "MAX_TENANT_LENGTH",
    "TENANT_PATTERN",
    "check_tenant",
    "key_tenant",
    "public_id",
    "run_key",
    "thread_key",
]

KEY_SEPARATOR: Final[str] = "\x1f"
"""Joins tenant, thread id and run id in a store key (a character no id may hold)."""

MAX_TENANT_LENGTH: Final[int] = 40
"""Longest tenant name (a UUID is 36)."""

TENANT_PATTERN: Final[re.Pattern[str]] = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,39}")
"""A tenant name: a letter or digit, then letters, digits and ``_.:@-``; at most 40."""


def check_tenant(tenant: str) -> str:
    """Return ``tenant`` when it is a tenant name (:data:`TENANT_PATTERN`).

    Raises:
        ValueError: it is not.
    """
    if not TENANT_PATTERN.fullmatch(tenant):
        raise ValueError(
            f"a tenant is 1-{MAX_TENANT_LENGTH} characters: a letter or digit, then letters, "
            "digits and _ . : @ -"
        )
    return tenant


def thread_key(tenant: str | None, thread_id: str) -> str:
    """The store key of ``tenant``'s thread ``thread_id`` (the id itself without tenancy)."""
    return thread_id if tenant is None else f"{tenant}{KEY_SEPARATOR}{thread_id}"


def run_key(tenant: str | None, thread_id: str, run_id: str) -> str:
    """The store key of run ``run_id`` of ``tenant``'s thread ``thread_id``."""
    return f"{thread_key(tenant, thread_id)}{KEY_SEPARATOR}{run_id}"


def public_id(key: str) -> str:
    """The client's id in a thread or run key: what follows the last separator."""
    return key.rpartition(KEY_SEPARATOR)[2]


def key_tenant(thread: str) -> str | None:
    """The tenant of a thread key (None: no tenancy)."""
    tenant, sep, _rest = thread.partition(KEY_SEPARATOR)
    return tenant if sep else None
