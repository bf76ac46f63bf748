"""The machinery behind the pytest plugin (`mcp_testkit.pytest_plugin`), which keeps only hooks, options,
the marker and fixtures.

- `options`: the plugin's settings as read from the command line and ini file, and the marker's keywords.
- `pool`: the servers of one pytest worker, started once by settings and reset for every test.
- `served`: the servers one test used, their check at teardown and their journal sections in reports.
- `diagrams`: `--mcp-report DIR`, a failing test's journals as HTML diagrams, linked from pytest-html.
- `handouts`: the objects fixtures hand out, `McpServerFactory` and `McpEnv`.
- `clients`: the async fixtures' plumbing, for anyio and for pytest-asyncio.

Nothing heavy is imported at module level here either: the server, uvicorn, httpx2 and `mcp` are
imported by the functions that need them.
"""
