"""``agui-gateway keys``: create, list and revoke client API keys in the run store's database.

::

    agui-gateway keys create --tenant acme [--routes gpt,claude] [--name ci] [--expires-days 90]
    agui-gateway keys list [--tenant acme]
    agui-gateway keys revoke <key id>

The database is ``GATEWAY_DATABASE_URL`` (and ``GATEWAY_DATABASE_SCHEMA``), or
``--database-url``: the same the gateway serves from, migrated when opened. ``create`` prints
the key once, on stdout (``agk_<id>_<secret>``; only the SHA-256 of the secret is stored) and
its id on stderr; ``list`` prints one line per key (id, tenant, routes, state, name), never a
secret; ``revoke`` takes effect on the next request on every replica (keys are checked
against the database on each request). Exit status 0, 1 for an unknown key id, 2 for a usage
error or a database that cannot be opened.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import timedelta
from typing import TextIO

from .auth.api_keys import new_api_key
from .store import RunStoreError, open_store
from .store.engine import DEFAULT_DATABASE_URL

__all__ = ["add_parser", "run"]


def _routes(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("--routes needs at least one route name")
    return names


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``keys`` subcommand to the CLI's subparsers."""
    keys = sub.add_parser("keys", help="create, list or revoke client API keys")
    keys.add_argument("--database-url", help="run store (default GATEWAY_DATABASE_URL)")
    actions = keys.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a key (printed once)")
    create.add_argument("--tenant", required=True, help="the tenant the key acts for")
    create.add_argument("--routes", type=_routes, help="comma-separated routes (default all)")
    create.add_argument("--name", help="a label for operators")
    create.add_argument("--expires-days", type=float, help="the key stops working after this")
    listing = actions.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument("--tenant", help="only this tenant's keys")
    revoke = actions.add_parser("revoke", help="revoke a key by id")
    revoke.add_argument("key_id")


async def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .config import Settings

    settings = Settings()
    url = args.database_url or settings.database_url or DEFAULT_DATABASE_URL
    try:
        store = await open_store(url, schema=settings.database_schema)
    except (RunStoreError, ValueError) as exc:
        print(f"agui-gateway keys: cannot open the run store: {type(exc).__name__}", file=err)
        return 2
    try:
        if args.action == "create":
            now = store.now()
            expires = (
                now + timedelta(days=args.expires_days) if args.expires_days is not None else None
            )
            try:
                record, key = new_api_key(
                    args.tenant, now=now, routes=args.routes, name=args.name, expires_at=expires
                )
            except ValueError as exc:
                print(f"agui-gateway keys: --tenant: {exc}", file=err)
                return 2
            await store.create_api_key(record)
            print(key, file=out)
            print(
                f"created key {record.id} for tenant {record.tenant!r} (shown once: store it now)",
                file=err,
            )
            return 0
        if args.action == "list":
            for item in await store.list_api_keys(tenant=args.tenant):
                if item.revoked_at is not None:
                    state = f"revoked {item.revoked_at:%Y-%m-%dT%H:%M:%SZ}"
                elif item.expires_at is not None:
                    state = f"expires {item.expires_at:%Y-%m-%dT%H:%M:%SZ}"
                else:
                    state = "active"
                routes = ",".join(item.routes) if item.routes is not None else "*"
                print(f"{item.id}\t{item.tenant}\t{routes}\t{state}\t{item.name or ''}", file=out)
            return 0
        revoked = await store.revoke_api_key(args.key_id)
        if revoked is None:
            print(f"agui-gateway keys: no key {args.key_id!r}", file=err)
            return 1
        print(f"revoked key {revoked.id} of tenant {revoked.tenant!r}", file=err)
        return 0
    finally:
        await store.close()


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run a parsed ``keys`` command; returns the exit status."""
    return asyncio.run(_run(args, out or sys.stdout, err or sys.stderr))
