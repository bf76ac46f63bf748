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
