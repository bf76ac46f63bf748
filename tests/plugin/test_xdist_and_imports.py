"""Where users are: pytest-xdist workers each with their own server, no heavy import until a fixture is used, and a
plugin module that stays thin."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_testkit.pytest_plugin

HEAVY = ("uvicorn", "mcp", "starlette", "httpx2", "hypothesis")


def test_xdist_workers_each_start_one_server(pytester: pytest.Pytester) -> None:
    """With -n 2 each worker starts one server of its own and failure reports still carry the journal."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("n", range(6))
        def test_port(mcp_server, worker_id, n):
            with open(f"ports-{worker_id}.txt", "a") as out:
                out.write(f"{mcp_server.port}\\n")

        def test_fails(mcp_server):
            mcp_server.tool("t")
            assert False
        """
    )
    result = pytester.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["*- mcp journal -*", "server 'test' http://127.0.0.1:*/mcp: 0 requests"])
    ports = {path.name: set(path.read_text().split()) for path in pytester.path.glob("ports-*.txt")}
    assert set(ports) <= {"ports-gw0.txt", "ports-gw1.txt"}
    assert all(len(found) == 1 for found in ports.values())
    assert len(set.union(*ports.values())) == len(ports)


def test_importing_the_plugin_imports_nothing_heavy() -> None:
    """`import mcp_testkit.pytest_plugin` leaves uvicorn, mcp, starlette, httpx2 and hypothesis unimported."""
    code = f"import sys, json, mcp_testkit.pytest_plugin; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_a_run_without_our_fixtures_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    """A pytest run that uses no fixture of ours never imports uvicorn, mcp, starlette or httpx2 for it."""
    pytester.makeconftest(
        f"""
        import json, sys

        def pytest_sessionfinish(session):
            with open("modules.json", "w") as out:
                json.dump([m for m in {HEAVY!r} if m in sys.modules], out)
        """
    )
    pytester.makepyfile("def test_plain():\n    assert True\n")
    # hypothesis' own pytest plugin imports hypothesis; it is not ours to judge here.
    pytester.runpytest_subprocess("-p", "no:hypothesispytest").assert_outcomes(passed=1)
    assert json.loads((pytester.path / "modules.json").read_text()) == []


HELPERS = {
    "_cassette_server": "mcp_server's body for a test marked cassette=; it imports the cassettes package's private "
    "module, which only the composition root may",
}
"""Functions of the plugin module that are neither hooks nor fixtures, each with its reason."""


def test_the_plugin_module_holds_hooks_options_and_fixtures_only() -> None:
    """pytest_plugin.py defines no class and no function but hooks, fixtures and the helpers named here."""
    tree = ast.parse(Path(mcp_testkit.pytest_plugin.__file__).read_text(encoding="utf-8"))
    classes = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    other = [
        node.name
        for node in functions
        if not node.name.startswith("pytest_")
        and not any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)
    ]
    assert classes == [], f"the plugin's machinery lives in mcp_testkit._plugin, not in classes here: {classes}"
    assert sorted(other) == sorted(HELPERS), f"move these to mcp_testkit._plugin: {sorted(set(other) - set(HELPERS))}"
