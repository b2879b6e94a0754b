"""agui-gateway's I/O side: the HTTP proxy (starlette + uvicorn + httpx) around the codecs.

Data flow of one request: :mod:`gateway.app` (endpoints) -> :mod:`gateway.request_ai_sdk`
(AI SDK body -> RunAgentInput) -> :mod:`gateway.pipeline` (one run: request translation in
``request_openai`` / ``request_anthropic`` / ``request_responses`` / ``request_gemini`` /
``request_passthrough``, :mod:`gateway.upstream` (httpx stream -> decoder -> AG-UI events,
failures as terminal events), the ui_schema stage) -> encoder -> :mod:`gateway.sse_response`
(SSE with keep-alives). Configuration: :mod:`gateway.config`; counters: :mod:`gateway.metrics`;
process entry point: :func:`gateway.server.serve`. Nothing is imported here, so
``gateway.cli translate`` stays free of the HTTP stack.
"""
