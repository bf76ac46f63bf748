"""JSON-RPC dispatch: one function per MCP method, JSON-RPC messages, listings in pages, what a server offers besides
tools, input requests and tasks; what differs between eras it asks of the request's era (`_era.py`).
"""
