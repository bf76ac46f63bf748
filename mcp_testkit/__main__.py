"""`python -m mcp_testkit` is `mcp-testkit`."""

from __future__ import annotations

from mcp_testkit.cli import main

raise SystemExit(main())
