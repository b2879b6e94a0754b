"""agui-gateway's I/O side: the HTTP proxy (starlette + uvicorn + httpx) around the codecs.

Data flow of one request: :mod:`gateway.app` (endpoints; an AI SDK body becomes a
RunAgentInput by :mod:`agui_codecs.protocols.ai_sdk.chat_request`) -> :mod:`gateway.pipeline`
(one run: the route's protocol spec builds the upstream request,
:mod:`gateway.upstream` streams it (httpx stream -> decoder -> AG-UI events, failures as
terminal events), the ui_schema stage) -> encoder -> :mod:`gateway.sse_response` (SSE with
keep-alives). Configuration: :mod:`gateway.config`; counters: :mod:`gateway.metrics`;
process entry point: :func:`gateway.server.serve`. Nothing is imported here, so
``gateway.cli translate`` stays free of the HTTP stack.
"""
