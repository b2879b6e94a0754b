"""AWS Signature Version 4 for Bedrock requests: the spec's ``sign`` hook.

The signature covers the method, the URL, the headers and the SHA-256 of the exact body, so it
is made after the body is serialised (``ProtocolSpec.sign``). The signing itself is botocore's
``botocore.auth.SigV4Auth`` (service ``bedrock``, the ``signingName`` of the Bedrock Runtime
service model), imported on the first signature: ``botocore.auth`` loads botocore's HTTP
stack (urllib3), which importing a codec module must not.

Credentials are read at request time from the standard AWS variables, as boto3's environment
provider reads them: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``
(temporary credentials; sent as ``x-amz-security-token``). The region comes from the URL's
host (``bedrock-runtime[-fips].<region>.amazonaws.com``, VPC endpoints included), else from
``AWS_REGION`` / ``AWS_DEFAULT_REGION`` (a proxy or a private endpoint URL).

A request that already carries ``authorization`` (a route with ``auth = { type = "bearer",
env = "AWS_BEARER_TOKEN_BEDROCK" }``: a Bedrock API key, the service's ``httpBearerAuth``
scheme) is sent as it is, unsigned.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

from ...errors import CodecError

__all__ = ["AUTH_MISSING", "SERVICE", "region_of", "sign"]

SERVICE: Final = "bedrock"
"""SigV4 service name (``signingName`` of ``bedrock-runtime`` 2023-09-30)."""

AUTH_MISSING: Final = "UPSTREAM_AUTH_MISSING"
"""Code of the :class:`~agui_codecs.errors.CodecError` raised when credentials are missing."""

_HOST = re.compile(
    r"(?:^|\.)bedrock-runtime(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com"
    r"(?:\.cn)?$"
)


def region_of(url: str) -> str | None:
    """The AWS region in a Bedrock Runtime endpoint URL's host, if it names one
    (``https://bedrock-runtime.eu-west-1.amazonaws.com/...`` -> ``"eu-west-1"``)."""
    match = _HOST.search((urlsplit(url).hostname or "").lower())
    return match.group(1) if match else None


def _env(name: str, environ: Mapping[str, str]) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


def sign(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    /,
    *,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Sign one request with SigV4 (see the module docstring); lower-case header names.

    Args:
        method: the HTTP method (``"POST"``).
        url: the full URL (path and query included, the model id percent-encoded).
        headers: the headers about to be sent.
        body: the exact body bytes.
        environ: where the AWS variables are read (default ``os.environ``, at call time).

    Returns:
        ``headers`` plus ``x-amz-date``, ``authorization`` and, with a session token,
        ``x-amz-security-token``; ``headers`` unchanged when they hold ``authorization``.

    Raises:
        CodecError: code ``UPSTREAM_AUTH_MISSING`` when the access key, the secret or the region
            is missing (the message names the variables; the gateway logs it and tells the
            client only that the route's credentials are not configured).
    """
    out = {k.lower(): v for k, v in headers.items()}
    if "authorization" in out:
        return out
    env = os.environ if environ is None else environ
    key, secret = _env("AWS_ACCESS_KEY_ID", env), _env("AWS_SECRET_ACCESS_KEY", env)
    if key is None or secret is None:
        raise CodecError(
            "AWS credentials are not set (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
            code=AUTH_MISSING,
        )
    region = region_of(url) or _env("AWS_REGION", env) or _env("AWS_DEFAULT_REGION", env)
    if region is None:
        raise CodecError(
            "the AWS region is neither in the URL's host nor in AWS_REGION / AWS_DEFAULT_REGION",
            code=AUTH_MISSING,
        )
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method=method, url=url, data=body, headers=out)
    credentials = Credentials(key, secret, _env("AWS_SESSION_TOKEN", env))
    SigV4Auth(credentials, SERVICE, region).add_auth(request)
    return {k.lower(): v for k, v in request.headers.items()}
