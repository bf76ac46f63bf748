"""Links to a live MCP server, over Streamable HTTP or a stdio process, and MCP spoken on them: what the chaos
proxy forwards to and the cassettes record from.
"""

__all__: list[str] = []
