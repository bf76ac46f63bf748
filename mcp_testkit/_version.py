"""The toolkit's version, read once from the installed distribution's metadata (pyproject.toml's `version`)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "mcp-bridge-testkit"
"""The name the toolkit is installed under (`pip install mcp-bridge-testkit`; it imports as `mcp_testkit`)."""

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # pragma: no cover - run from a source tree that was never installed
    __version__ = "0+unknown"
