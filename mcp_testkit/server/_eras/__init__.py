"""The two protocol eras over the one transport: the handshake (sessions, `initialize`, GET streams, resumption)
and the stateless 2026-07-28 (`server/discover`, `_meta` per request, `Mcp-*` headers).
"""
