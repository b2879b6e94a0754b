"""Client authentication (issue 15 §1): every endpoint but health and metrics wants a
credential; missing, wrong, revoked and expired ones are a 401 with ``WWW-Authenticate``;
route allowlists are a 403; scoped tokens read one run's events (``?access_token=``, for a
browser ``EventSource``) and nothing else; ``GATEWAY_AUTH=auto`` leaves only the embedded demo
on a loopback host open."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from authapp import auth_app, run_input
from durable_support import events_of, eventually

from gateway.auth import ScopedToken, mint_token
from gateway.config import Settings
from gateway.server import resolve_auth

pytestmark = pytest.mark.timeout(120)

PROTECTED = [
    ("POST", "/v1/agui/gpt"),
    ("POST", "/v1/ai-sdk/gpt"),
    ("GET", "/v1/ai-sdk/gpt/c1/stream"),
    ("POST", "/api/v1/agent/runs"),
    ("POST", "/api/v1/agent/runs/t1/cancel?runId=r1"),
    ("POST", "/api/v1/agent/runs/t1/token?runId=r1"),
    ("GET", "/api/v1/agent/runs/t1/events?runId=r1"),
    ("GET", "/api/v1/agent/history?threadId=t1"),
    ("GET", "/inspect/api/threads"),
    ("GET", "/inspect/api/runs?threadId=t1"),
    ("GET", "/inspect/api/verdicts?threadId=t1&runId=r1"),
]


def _unauthenticated(reply: object) -> bool:
    status = getattr(reply, "status", None)
    headers = getattr(reply, "headers", None) or {}
    return (
        status == 401
        and reply.json()["error"]["code"] == "UNAUTHENTICATED"  # type: ignore[attr-defined]
        and headers.get("www-authenticate", "").startswith("Bearer ")
    )


async def test_missing_wrong_and_malformed_credentials_are_401(tmp_path: Path) -> None:
    async with auth_app(tmp_path) as gw:
        good = await gw.key("acme")
        key_id = good.split("_")[1]
        wrong_secret = f"agk_{key_id}_{'A' * 43}"
        unknown_id = f"agk_{'0' * 16}_{good.split('_', 2)[2]}"
        for method, target in PROTECTED:
            body = (
                {"route": "gpt", "input": run_input("t1", "r1")} if "runs" == target[-4:] else None
            )
            assert _unauthenticated(await gw.request(method, target, body)), target
            for credential in (wrong_secret, unknown_id, "agk_short", "not-a-key", "a.b.c"):
                reply = await gw.request(method, target, body, key=credential)
                assert _unauthenticated(reply), (target, credential)
            reply = await gw.request(
                method, target, headers={"authorization": "Basic Zm9vOmJhcg=="}
            )
            assert _unauthenticated(reply), target
        for public in ("/healthz", "/readyz", "/metrics", "/inspect", "/inspect/static/inspect.js"):
            assert (await gw.request("GET", public)).status == 200


async def test_a_key_works_until_it_is_revoked_or_expires(tmp_path: Path) -> None:
    async with auth_app(tmp_path) as gw:
        key = await gw.key("acme")
        reply = await gw.request("POST", "/v1/agui/gpt", run_input("t1", "r1"), key=key)
        assert reply.status == 200 and events_of(reply.body)[-1]["type"] == "RUN_FINISHED"
        assert (await gw.request("GET", "/api/v1/agent/history?threadId=t1", key=key)).status == 200
        revoked = await gw.store.revoke_api_key(key.split("_")[1])
        assert revoked is not None and revoked.revoked_at is not None
        reply = await gw.request("GET", "/api/v1/agent/history?threadId=t1", key=key)
        assert _unauthenticated(reply)
        assert reply.json()["error"]["message"] == "credentials are not valid"  # as a wrong key
        expired = await gw.key("acme", expires_at=gw.store.now() - timedelta(seconds=1))
        assert _unauthenticated(
            await gw.request("GET", "/api/v1/agent/history?threadId=t1", key=expired)
        )


async def test_the_route_allowlist_is_a_403_and_unknown_routes_list_only_allowed_ones(
    tmp_path: Path,
) -> None:
    async with auth_app(tmp_path) as gw:
        key = await gw.key("acme", routes=["gpt"])
        other = await gw.key("acme")
        ok = await gw.request("POST", "/v1/agui/gpt", run_input("t1", "r1"), key=key)
        assert ok.status == 200
        for method, target, body in (
            ("POST", "/v1/agui/claude", run_input("t2", "r2")),
            ("POST", "/api/v1/agent/runs", {"route": "claude", "input": run_input("t3", "r3")}),
            ("GET", "/v1/ai-sdk/claude/c1/stream", None),
        ):
            reply = await gw.request(method, target, body, key=key)
            assert reply.status == 403 and reply.json()["error"]["code"] == "ROUTE_FORBIDDEN"
        # a run of the same tenant on a route the key may not call: 403 too
        made = await gw.request(
            "POST",
            "/api/v1/agent/runs",
            {"route": "claude", "input": run_input("t4", "r4")},
            key=other,
        )
        assert made.status == 201
        reply = await gw.request("GET", "/api/v1/agent/runs/t4/events?runId=r4", key=key)
        assert reply.status == 403 and reply.json()["error"]["code"] == "ROUTE_FORBIDDEN"
        missing = await gw.request("POST", "/v1/agui/nope", run_input("t5", "r5"), key=key)
        assert missing.status == 404 and "known: gpt)" in missing.json()["error"]["message"]


async def test_a_scoped_token_reads_its_run_only(tmp_path: Path) -> None:
    async with auth_app(tmp_path) as gw:
        key = await gw.key("acme")
        for thread, run in (("t1", "r1"), ("t1", "r2")):
            made = await gw.request(
                "POST",
                "/api/v1/agent/runs",
                {"route": "gpt", "input": run_input(thread, run)},
                key=key,
            )
            assert made.status == 201
        minted = await gw.request("POST", "/api/v1/agent/runs/t1/token?runId=r1", key=key)
        assert minted.status == 200 and minted.headers["cache-control"] == "no-store"
        body = minted.json()
        token = body["token"]
        assert body["expiresAt"] > time.time() and token.startswith("ags_")
        assert "agk_" not in token and key.split("_", 2)[2] not in token
        # the events URL with the token: what an EventSource opens
        reply = await gw.request("GET", body["eventsUrl"])
        assert reply.status == 200 and events_of(reply.body)[0]["runId"] == "r1"
        # the same token for another run, another endpoint, or to mint more: refused
        other = await gw.request(
            "GET", f"/api/v1/agent/runs/t1/events?runId=r2&access_token={token}"
        )
        assert other.status == 403
        for method, target in (
            ("GET", "/api/v1/agent/history?threadId=t1"),
            ("POST", "/api/v1/agent/runs/t1/cancel?runId=r1"),
            ("POST", "/api/v1/agent/runs/t1/token?runId=r1"),
        ):
            assert (await gw.request(method, target, key=token)).status == 403, target
            # as a query parameter it is not even read there: no credential at all
            assert _unauthenticated(await gw.request(method, f"{target}&access_token={token}"))
        # expired, forged
        auth = gw.app.state.services.auth
        stale = mint_token(auth.secret, ScopedToken("acme", "t1", "r1", None, int(time.time()) - 1))
        reply = await gw.request(
            "GET", f"/api/v1/agent/runs/t1/events?runId=r1&access_token={stale}"
        )
        assert _unauthenticated(reply) and reply.json()["error"]["message"] == "token expired"
        forged = mint_token(b"x" * 32, ScopedToken("acme", "t1", "r1", None, int(time.time()) + 60))
        reply = await gw.request(
            "GET", f"/api/v1/agent/runs/t1/events?runId=r1&access_token={forged}"
        )
        assert _unauthenticated(reply)


async def test_no_store_open_is_a_503_for_keys(tmp_path: Path) -> None:
    from gateway.app import create_app

    routes = tmp_path / "routes.toml"
    from authapp import ROUTES

    routes.write_text(ROUTES, encoding="utf-8")
    app = create_app(Settings(config=routes, auth="required"))  # no lifespan: no store
    from durable_support import call

    reply = await call(
        app,
        "POST",
        "/v1/agui/gpt",
        run_input("t", "r"),
        headers={"authorization": f"Bearer agk_{'0' * 16}_{'A' * 43}"},
    )
    assert reply.status == 503 and reply.json()["error"]["code"] == "AUTH_UNAVAILABLE"


@pytest.mark.parametrize(
    ("config", "host", "expected"),
    [
        (None, "127.0.0.1", "off"),  # make run: the embedded demo on loopback
        (None, "localhost", "off"),
        (None, "::1", "off"),
        (None, "0.0.0.0", "required"),  # the Docker image: the demo, but on every interface
        ("routes.toml", "127.0.0.1", "required"),  # your own routes: your keys are at stake
    ],
)
def test_auto_is_open_only_for_the_embedded_demo_on_loopback(
    config: str | None, host: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_AUTH", "auto")
    settings = Settings(config=Path(config) if config else None)
    assert resolve_auth(settings, host).auth == expected
    monkeypatch.setenv("GATEWAY_AUTH", "required")
    assert resolve_auth(Settings(), "127.0.0.1").auth == "required"  # explicit wins


async def test_revoking_stops_a_key_on_another_replica_at_its_next_request(tmp_path: Path) -> None:
    async with auth_app(tmp_path) as gw:
        key = await gw.key("acme")
        assert (await gw.request("GET", "/api/v1/agent/history?threadId=t", key=key)).status == 200

        async def refused() -> bool:
            return (
                await gw.request("GET", "/api/v1/agent/history?threadId=t", key=key)
            ).status == 401

        await gw.store.revoke_api_key(key.split("_")[1])  # as the CLI does, in another process
        await eventually(refused, within=1.0, what="revoked key refused")
