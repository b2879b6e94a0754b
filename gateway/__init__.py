"""agui-gateway's I/O side: the HTTP proxy (starlette + uvicorn + httpx) around the codecs.

Data flow: :mod:`gateway.app` (endpoints) -> :mod:`gateway.request_ai_sdk` (AI SDK body ->
RunAgentInput) -> :mod:`gateway.request_openai` / :mod:`gateway.request_anthropic` (provider
request body) -> :mod:`gateway.upstream` (httpx stream -> decoder -> AG-UI events, failures as
terminal events) -> encoder -> :mod:`gateway.sse_response` (SSE with keep-alives).
Configuration: :mod:`gateway.config`; process entry point: :func:`gateway.server.serve`.
Nothing is imported here, so ``gateway.cli translate`` stays free of the HTTP stack.
"""
