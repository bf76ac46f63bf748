"""A Python scenario: a file defining `scenario(server)`, and optionally `server_options`, imported as a module."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit.scenario._document import ScenarioError

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp_testkit.server import TestMcpServer

__all__ = ["load_python", "origin"]


def load_python(path: Path) -> tuple[dict[str, Any], Callable[[TestMcpServer], None]]:
    """The file's `server_options` and its `scenario` function; ScenarioError naming what is missing or raised."""
    name = f"mcp_testkit_scenario_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ScenarioError(f"scenario {path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        where = origin(exc, str(path))
        raise ScenarioError(f"scenario {path}: importing it raised {where}{type(exc).__name__}: {exc}") from exc
    setup = getattr(module, "scenario", None)
    if not callable(setup):
        raise ScenarioError(f"scenario {path}: defines no function scenario(server)")
    options = getattr(module, "server_options", {})
    if not isinstance(options, Mapping):
        raise ScenarioError(f"scenario {path}: server_options must be a dict of TestMcpServer arguments")
    return dict(options), setup


def origin(exc: BaseException, source: str) -> str:
    """'line N: ' for the deepest frame of `exc` that is in the scenario file, else ''."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == source]
    if not frames:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).name == Path(source).name]
    return f"line {frames[-1].lineno}: " if frames else ""
