"""Tests of `tests/node_trees.py`: a Node test skips only without Node, never under CI, and `npm ci` runs once."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from node_trees import CONFORMANCE, CONFORMANCE_NEXT, EVERYTHING, MERMAID, TS_CLIENT, installed, node, on_ci

RUNS = "npm-ci-runs.log"


def _tree(folder: Path, description: str = "a tree with no dependencies") -> Path:
    """A Node test tree with no dependencies whose `npm ci` appends a line to RUNS (a root lifecycle script)."""
    folder.mkdir(exist_ok=True)
    package = {
        "name": "tree",
        "version": "1.0.0",
        "private": True,
        "description": description,
        "scripts": {"postinstall": f"node -e \"require('fs').appendFileSync('{RUNS}', 'ran\\\\n')\""},
    }
    (folder / "package.json").write_text(json.dumps(package))
    lock = {
        "name": "tree",
        "version": "1.0.0",
        "lockfileVersion": 3,
        "packages": {"": {"name": "tree", "version": "1.0.0"}},
    }
    (folder / "package-lock.json").write_text(json.dumps(lock))
    return folder


def _runs(tree: Path) -> int:
    log = tree / RUNS
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture
def npm_present() -> None:
    """The tests that run npm need Node.js (they skip without it, and fail under CI=true)."""
    node("the npm ci tests")


@pytest.mark.parametrize(
    ("value", "expected"), [("", False), ("0", False), ("false", False), ("true", True), ("1", True)]
)
def test_on_ci_reads_the_ci_variable(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    """CI=true or 1 is a CI run; empty, 0 or false is not."""
    monkeypatch.setenv("CI", value)
    assert on_ci() is expected


def test_without_node_a_node_test_skips_saying_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With no `node` on PATH and CI unset, the test skips with a reason naming Node.js and what needs it."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"Node.js is not installed .*the TypeScript SDK client needs it"):
        node("the TypeScript SDK client")


def test_under_ci_a_missing_node_fails_instead_of_skipping(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Under CI=true a Node test without Node fails, so CI can never turn the Node tests off silently."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"under CI=true a Node test must not skip"):
        node("the MCP conformance suite")


@pytest.mark.usefixtures("npm_present")
def test_npm_ci_runs_once_and_again_when_the_lock_changes(tmp_path: Path) -> None:
    """The first use runs `npm ci`; later uses find the stamp; a changed package file installs again."""
    tree = _tree(tmp_path / "tree")
    assert installed(tree) == tree
    assert _runs(tree) == 1
    installed(tree)
    assert _runs(tree) == 1
    _tree(tree, description="changed")
    installed(tree)
    assert _runs(tree) == 2


@pytest.mark.usefixtures("npm_present")
def test_concurrent_first_uses_run_npm_ci_once(tmp_path: Path) -> None:
    """Four users at once (as xdist workers are) wait on the lock: one `npm ci` runs, all get the tree."""
    tree = _tree(tmp_path / "tree")
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(installed, [tree] * 4))
    assert got == [tree] * 4
    assert _runs(tree) == 1


@pytest.mark.usefixtures("npm_present")
def test_npm_missing_fails_with_the_command_to_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Node without npm, and a tree not installed yet: the test fails naming npm and the `npm ci` to run."""
    only_node = tmp_path / "bin"
    only_node.mkdir()
    (only_node / "node").symlink_to(shutil.which("node") or "node")
    monkeypatch.setenv("PATH", str(only_node))
    tree = _tree(tmp_path / "tree")
    with pytest.raises(pytest.fail.Exception, match=r"npm is not on PATH.*run `npm ci --prefix .*tree`"):
        installed(tree)
    assert not (tree / "node_modules").exists()


@pytest.mark.usefixtures("npm_present")
def test_failed_npm_ci_reports_npms_output(tmp_path: Path) -> None:
    """A lock out of step with package.json makes `npm ci` fail; the test fails with its exit status and npm's cause."""
    tree = _tree(tmp_path / "tree")
    package = json.loads((tree / "package.json").read_text())
    package["dependencies"] = {"left-pad": "1.3.0"}
    (tree / "package.json").write_text(json.dumps(package))
    with pytest.raises(pytest.fail.Exception, match=r"`npm ci --prefix .*tree` failed with exit status \d+") as failed:
        installed(tree)
    assert "left-pad" in str(failed.value)


@pytest.mark.parametrize(
    "tree",
    [CONFORMANCE, CONFORMANCE_NEXT, TS_CLIENT, MERMAID, EVERYTHING],
    ids=["conformance", "conformance_next", "ts_client", "mermaid", "everything"],
)
def test_each_node_tree_pins_exact_versions(tree: Path) -> None:
    """Every Node test tree has a lock, and its package.json names exact versions (no ranges)."""
    package = json.loads((tree / "package.json").read_text())
    lock = json.loads((tree / "package-lock.json").read_text())
    wanted = {**package.get("dependencies", {}), **package.get("devDependencies", {})}
    assert wanted
    assert all(version[0].isdigit() for version in wanted.values()), wanted
    for name, version in wanted.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
