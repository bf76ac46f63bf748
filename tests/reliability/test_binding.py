"""Issue 22 item 8: from Python, a server or recording proxy bound to a non-loopback address warns, as the command
line refuses it without `--allow-remote`; `allow_remote=True` silences it."""

from __future__ import annotations

import warnings

import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.cassettes import Recording
from mcp_testkit.server import RemoteHostWarning


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "example.test"])
def test_a_non_loopback_host_warns_naming_it_and_the_way_to_silence_it(host: str) -> None:
    """TestMcpServer(host=...) off loopback: a RemoteHostWarning (a UserWarning) naming the host and allow_remote."""
    with pytest.warns(RemoteHostWarning, match=rf"TestMcpServer 'open' binds {host!r}.*allow_remote=True") as caught:
        TestMcpServer("open", host=host)
    assert issubclass(caught[0].category, UserWarning)
    assert caught[0].filename == __file__  # it points at the caller's line


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost", "LOCALHOST"])
def test_loopback_hosts_and_allow_remote_do_not_warn(host: str) -> None:
    """Loopback addresses and names never warn, and allow_remote=True silences a wildcard one."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TestMcpServer(host=host)
        TestMcpServer(host="0.0.0.0", allow_remote=True)
        Recording("http://127.0.0.1:1/mcp", out="unused.json", host=host)


def test_the_recording_proxy_on_a_wildcard_address_warns() -> None:
    """Recording(host="0.0.0.0") warns as the server does; allow_remote=True is accepted there too."""
    with pytest.warns(RemoteHostWarning, match="the recording proxy binds '0.0.0.0'"):
        Recording("http://127.0.0.1:1/mcp", out="unused.json", host="0.0.0.0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Recording("http://127.0.0.1:1/mcp", out="unused.json", host="0.0.0.0", allow_remote=True)


def test_serve_with_allow_remote_prints_no_python_warning() -> None:
    """`serve --host 0.0.0.0 --allow-remote` says what it exposes in its own words, without a Python warning."""
    import subprocess

    from ._support import LIMIT_S, serve_command

    process = subprocess.Popen(serve_command("--host", "0.0.0.0", "--allow-remote"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)  # fmt: skip
    try:
        assert process.stdout is not None
        assert b" at http://" in process.stdout.readline()
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=LIMIT_S)
    assert b"RemoteHostWarning" not in stderr
    assert b"mcp-testkit: warning: serving on 0.0.0.0" in stderr
