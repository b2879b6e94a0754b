"""Credentials in a route's ``upstream_url`` are refused at start-up (issue 15 §4): the URL is
recorded with every run and logged, so a key must come from ``auth.env``. The error names the
route and the field, never the secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.config import load_routes
from gateway.errors import ConfigError

SECRET = "s3cr3t-Value-9f8e7d"


def _load(tmp_path: Path, url: str, protocol: str = "gemini") -> None:
    path = tmp_path / "routes.toml"
    path.write_text(
        f'[[routes]]\nname = "g"\nprotocol = "{protocol}"\nmodel = "m"\nupstream_url = "{url}"\n',
        encoding="utf-8",
    )
    load_routes(path)


@pytest.mark.parametrize(
    "url",
    [
        f"https://generativelanguage.googleapis.com/v1beta?key={SECRET}",
        f"https://api.example.com/v1?api_key={SECRET}",
        f"https://api.example.com/v1?api-version=2024-10-21&access_token={SECRET}",
        f"https://x.blob.example.net/v1?sv=2024&sig={SECRET}",
        f"https://api.example.com/v1?Client_Secret={SECRET}",
        f"https://user:{SECRET}@api.example.com/v1",
        f"https://{SECRET}@api.example.com/v1",
    ],
)
def test_credentials_in_the_url_are_refused_without_echo(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, url)
    message = info.value.message
    assert "route 'g'" in message and "upstream_url" in message
    assert "auth" in message and "env" in message
    assert SECRET not in message


@pytest.mark.parametrize(
    "url",
    [
        "https://res.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
        "https://api.example.com/v1?alt=sse",
        "https://api.example.com/v1",
    ],
)
def test_plain_query_parameters_load(tmp_path: Path, url: str) -> None:
    _load(tmp_path, url, protocol="openai-chat")
