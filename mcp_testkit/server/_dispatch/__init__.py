"""JSON-RPC dispatch: one function per MCP method, listings in pages, what a server offers besides tools, input
requests, `subscriptions/listen` and tasks.
"""
