"""The wire pieces every layer shares: ASGI, answer framing, the connection, SSE, strict JSON, headers, the eras'
wire facts, Origin and binding checks, TLS, the uvicorn runner, parameter headers, argument validation, terminal text.

A neutral package: it imports no other package of the toolkit, so any of them may use it.
"""
