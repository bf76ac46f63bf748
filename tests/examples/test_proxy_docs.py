"""What docs/proxy.md shows besides runnable code: the server-everything example, a `py` block (tests/examples/
test_docs.py runs `python` blocks in an empty folder) run here in a folder where server-everything is installed,
as `npm install` would put it."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from node_trees import NPM_CI_TIMEOUT_S, everything_server

PAGE = Path(__file__).resolve().parents[2] / "docs" / "proxy.md"


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + 60)
def test_the_server_everything_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example runs as printed beside an installed server-everything, and stops what it starts."""
    found = re.search(r"<!-- example: everything -->\n```py\n(.*?)```", PAGE.read_text(), re.S)
    assert found is not None, f"no server-everything example in {PAGE}"
    (tmp_path / "node_modules").symlink_to(everything_server().tree / "node_modules", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    threads = set(threading.enumerate())
    exec(compile(found[1], str(PAGE), "exec"), {"__name__": "__main__"})
    started = [thread for thread in threading.enumerate() if thread not in threads]
    for thread in started:
        thread.join(timeout=5)
    assert not [thread.name for thread in started if thread.is_alive()]


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + 60)
def test_the_server_everything_example_holds_over_http(tmp_path: Path) -> None:
    """The same example with the proxy in front of server-everything over Streamable HTTP (the page's "Over HTTP it
    is" variant): the LimitData call the server ran is journaled `executed` there too, not only over stdio."""
    found = re.search(r"<!-- example: everything -->\n```py\n(.*?)```", PAGE.read_text(), re.S)
    assert found is not None, f"no server-everything example in {PAGE}"
    stdio = "ChaosProxy(upstream_command=SERVER)"
    assert stdio in found[1], f"the example no longer opens {stdio}: update this test's HTTP variant"
    with everything_server().serving_http(tmp_path / "stderr.txt") as url:
        code = found[1].replace(stdio, f"ChaosProxy({url!r})")
        threads = set(threading.enumerate())
        exec(compile(code, str(PAGE), "exec"), {"__name__": "__main__"})
        started = [thread for thread in threading.enumerate() if thread not in threads]
        for thread in started:
            thread.join(timeout=5)
    assert not [thread.name for thread in started if thread.is_alive()]
