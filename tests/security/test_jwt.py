"""JWT bearer verification (issue 15 §1) against a JWKS served by a real HTTP server on
loopback: a token of the provider is accepted with its tenant and routes claims; expired,
wrong issuer or audience, unsigned (``alg: none``), HMAC-signed with the public key, unknown
key and tenant-less tokens are refused; keys are fetched once and reused, and a rotated key
(a new ``kid``) is fetched when it first shows up."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from authapp import auth_app, run_input
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

pytestmark = pytest.mark.timeout(120)

ISSUER = "https://idp.example.test/"
AUDIENCE = "agui-gateway"


class Provider:
    """An identity provider's JWKS endpoint on 127.0.0.1 (``keys`` is what it serves)."""

    def __init__(self) -> None:
        self.keys: dict[str, rsa.RSAPrivateKey] = {}
        self.hits = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                provider.hits += 1
                jwks = {"keys": [provider.public_jwk(kid) for kid in provider.keys]}
                body = json.dumps(jwks).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"

    def add_key(self, kid: str) -> None:
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def public_jwk(self, kid: str) -> dict[str, Any]:
        jwk = json.loads(RSAAlgorithm.to_jwk(self.keys[kid].public_key()))
        return {**jwk, "kid": kid, "use": "sig", "alg": "RS256"}

    def token(self, kid: str = "k1", **claims: Any) -> str:
        now = int(time.time())
        body = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": "user-1",
            "exp": now + 300,
            "iat": now,
            "tenant": "acme",
            **claims,
        }
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, self.keys[kid], algorithm="RS256", headers={"kid": kid})


@pytest.fixture
def provider() -> Iterator[Provider]:
    p = Provider()
    p.add_key("k1")
    thread = threading.Thread(target=p.server.serve_forever, daemon=True)
    thread.start()
    yield p
    p.server.shutdown()
    p.server.server_close()


def _settings(provider: Provider, **extra: Any) -> dict[str, Any]:
    return {
        "jwt_jwks_url": provider.url,
        "jwt_issuer": ISSUER,
        "jwt_audience": AUDIENCE,
        "jwt_routes_claim": "agui_routes",
        **extra,
    }


async def test_provider_tokens_are_accepted_and_keys_cached(
    tmp_path: Path, provider: Provider
) -> None:
    async with auth_app(tmp_path, **_settings(provider)) as gw:
        token = provider.token(agui_routes=["gpt"])
        for run in ("r1", "r2", "r3"):
            reply = await gw.request(
                "POST", "/v1/agui/gpt", run_input("t1", run, message=f"m-{run}"), key=token
            )
            assert reply.status == 200, reply.body
        assert provider.hits == 1  # fetched once, reused
        history = await gw.request("GET", "/api/v1/agent/history?threadId=t1", key=token)
        assert history.json()["total"] == 6
        # the tenant claim scopes the threads: an API key of tenant acme sees the same thread
        key = await gw.key("acme")
        same = await gw.request("GET", "/api/v1/agent/history?threadId=t1", key=key)
        assert same.json()["total"] == 6
        other = await gw.request(
            "GET",
            "/api/v1/agent/history?threadId=t1",
            key=provider.token(tenant="other", agui_routes=["gpt"]),
        )
        assert other.json()["total"] == 0
        # the routes claim is the allowlist
        reply = await gw.request("POST", "/v1/agui/claude", run_input("t1", "r4"), key=token)
        assert reply.status == 403 and reply.json()["error"]["code"] == "ROUTE_FORBIDDEN"


async def test_bad_tokens_are_refused(tmp_path: Path, provider: Provider) -> None:
    async with auth_app(tmp_path, **_settings(provider)) as gw:
        now = int(time.time())
        pem_public = provider.keys["k1"].public_key()
        from cryptography.hazmat.primitives import serialization

        public_bytes = pem_public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        claims = {"iss": ISSUER, "aud": AUDIENCE, "exp": now + 60, "tenant": "acme"}
        cases = {
            "expired": provider.token(exp=now - 120),
            "wrong issuer": provider.token(iss="https://evil.test/"),
            "wrong audience": provider.token(aud="someone-else"),
            "no exp": provider.token(exp=None),
            "alg none": jwt.encode(claims, None, algorithm="none", headers={"kid": "k1"}),
            "hmac with the public key": jwt.encode(
                claims, public_bytes.decode()[:64], algorithm="HS256", headers={"kid": "k1"}
            ),
            "unknown kid": provider.token().replace(
                jwt.get_unverified_header(provider.token())["kid"], "k1"
            )[:-4]
            + "AAAA",
        }
        for name, token in cases.items():
            reply = await gw.request("GET", "/api/v1/agent/history?threadId=t", key=token)
            assert reply.status == 401, (name, reply.body)
            assert reply.json()["error"]["code"] == "UNAUTHENTICATED"
        expired = await gw.request("GET", "/api/v1/agent/history?threadId=t", key=cases["expired"])
        assert expired.json()["error"]["message"] == "token expired"
        for claim in ({"tenant": None}, {"tenant": "bad tenant!"}):
            reply = await gw.request(
                "GET", "/api/v1/agent/history?threadId=t", key=provider.token(**claim)
            )
            assert reply.status == 403, claim


async def test_a_rotated_key_is_fetched_when_it_first_shows_up(
    tmp_path: Path, provider: Provider
) -> None:
    async with auth_app(tmp_path, **_settings(provider)) as gw:
        first = await gw.request(
            "GET", "/api/v1/agent/history?threadId=t", key=provider.token(agui_routes=[])
        )
        assert first.status == 200 and provider.hits == 1
        provider.add_key("k2")  # the provider rotates
        reply = await gw.request(
            "GET", "/api/v1/agent/history?threadId=t", key=provider.token("k2")
        )
        assert reply.status == 200 and provider.hits == 2
        # made-up key ids do not make the gateway hammer the provider
        forged = provider.token("k2").split(".")
        header = jwt.utils.base64url_encode(
            json.dumps({"alg": "RS256", "kid": "k-made-up"}).encode()
        ).decode()
        for _ in range(5):
            reply = await gw.request(
                "GET", "/api/v1/agent/history?threadId=t", key=".".join([header, *forged[1:]])
            )
            assert reply.status == 401
        assert provider.hits == 2  # within REFETCH_INTERVAL: no new fetch
