"""``bedrock-converse``: Amazon Bedrock ``ConverseStream`` (Bedrock Runtime ``2023-09-30``).

``decoder.py`` (AWS event-stream messages -> AG-UI events; ``_eventstream.py`` splits the
binary body, botocore's parser checks the CRCs), ``request.py`` (``RunAgentInput`` ->
``POST {base}/model/{modelId}/converse-stream`` body), ``_sigv4.py`` (the ``sign`` hook:
SigV4 with botocore, credentials from the standard AWS variables at request time).

Route: ``upstream_url = "https://bedrock-runtime.<region>.amazonaws.com"``, ``model`` = the
model or inference-profile id (``anthropic.claude-sonnet-4-5-20250929-v1:0``,
``us.amazon.nova-micro-v1:0``) or ARN, percent-encoded into the path.
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from ._sigv4 import sign
from .decoder import BedrockConverseDecoder
from .request import build_request

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name=BedrockConverseDecoder.name,
    decoder=BedrockConverseDecoder,
    build_request=build_request,
    path="/model/{model}/converse-stream",
    headers={"accept": "application/vnd.amazon.eventstream"},
    endpoint_suffixes=("/converse-stream", "/converse"),
    sign=sign,
    description="Amazon Bedrock ConverseStream (SigV4 from the AWS_* variables)",
)
