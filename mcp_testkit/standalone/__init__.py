"""The standalone server (`mcp-testkit serve`): the admin API that scripts and inspects a running server or proxy
over HTTP.
"""

__all__: list[str] = []
