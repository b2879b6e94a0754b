"""SigV4 as the service checks it, for tests: the algorithm of the AWS documentation ("Create a
signed AWS API request", Signature Version 4), written independently of botocore."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote, urlsplit

__all__ = ["ENV", "verify_sigv4"]

ENV = {
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
}
"""The example credentials of the AWS SigV4 documentation."""


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def verify_sigv4(method: str, url: str, headers: dict[str, str], body: bytes, secret: str) -> None:
    """The service's check (AWS "Signature Version 4 signing process"): canonical request,
    string to sign, derived key; non-S3 paths are URI-encoded a second time."""
    auth = headers["authorization"]
    algorithm, _, rest = auth.partition(" ")
    assert algorithm == "AWS4-HMAC-SHA256"
    fields = dict(item.strip().split("=", 1) for item in rest.split(","))
    scope = fields["Credential"].split("/", 1)[1]
    date, region, service, terminator = scope.split("/")
    assert terminator == "aws4_request"
    signed = fields["SignedHeaders"].split(";")
    assert "host" in signed and "x-amz-date" in signed
    parts = urlsplit(url)
    values = {**{k.lower(): v for k, v in headers.items()}, "host": parts.netloc}
    canonical = "\n".join(
        [
            method,
            quote(parts.path, safe="/~"),
            parts.query,
            "".join(f"{h}:{' '.join(values[h].split())}\n" for h in signed),
            ";".join(signed),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256",
            values["x-amz-date"],
            scope,
            hashlib.sha256(canonical.encode()).hexdigest(),
        ]
    )
    key = _hmac(
        _hmac(_hmac(_hmac(f"AWS4{secret}".encode(), date), region), service), "aws4_request"
    )
    assert hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest() == fields["Signature"]
