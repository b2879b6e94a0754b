"""``agui-gateway keys create|list|revoke`` (issue 15 §1): the key is printed once, only its
hash is stored, ``list`` never shows a secret, a revoked key stops working."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sqlalchemy as sa

from gateway.auth.api_keys import matches, parse_key
from gateway.cli import main
from gateway.store import open_store


def test_create_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/keys.db"
    args = ["keys", "--database-url", url]
    assert (
        main([*args, "create", "--tenant", "acme", "--routes", "gpt,claude", "--name", "ci"]) == 0
    )
    out = capsys.readouterr()
    key = out.out.strip()
    parsed = parse_key(key)
    assert parsed is not None and "shown once" in out.err
    key_id, secret = parsed

    assert main([*args, "list"]) == 0
    listing = capsys.readouterr().out
    assert listing.split("\t")[:4] == [key_id, "acme", "gpt,claude", "active"]
    assert secret not in listing

    async def stored() -> tuple[list[str], bool]:
        store = await open_store(url)
        try:
            async with store.engine.connect() as conn:
                rows = [
                    repr(tuple(r))
                    for r in (await conn.execute(sa.text("SELECT * FROM api_keys"))).all()
                ]
            record = await store.get_api_key(key_id)
            assert record is not None
            return rows, matches(record, secret)
        finally:
            await store.close()

    rows, ok = asyncio.run(stored())
    assert ok and rows and not any(secret in row for row in rows)  # only the hash is at rest

    assert main([*args, "revoke", key_id]) == 0
    assert main([*args, "list", "--tenant", "acme"]) == 0
    assert "\trevoked " in capsys.readouterr().out
    assert main([*args, "revoke", "0" * 16]) == 1
    assert main([*args, "create", "--tenant", "bad tenant!"]) == 2
