"""scripts/matrix.py spread over machines: a shard per bridge (`--only BRIDGE --json FILE`) and `--merge`, which
writes the shards as one run of their bridges would, and refuses shards of another toolkit or other settings."""

from __future__ import annotations

import functools
import json
import re
import runpy
import shlex
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "matrix.py"
RUN_S = 180
"""A run of the toolkit's columns for one property at 2 examples (about 5 s here) ends well within this, or fails."""
FASTMCP = "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter"


@functools.cache
def _script() -> Any:
    """scripts/matrix.py's names (run as a module named matrix, not as __main__)."""
    return types.SimpleNamespace(**runpy.run_path(str(SCRIPT), run_name="matrix"))


def _matrix(*options: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), *map(str, options)]
    return subprocess.run(command, capture_output=True, text=True, timeout=RUN_S, check=False, cwd=cwd)


def _published_copy(folder: Path) -> Path:
    """A copy of the published docs/matrix.{md,json}, for a run to write into."""
    folder.mkdir(parents=True)
    for name in ("matrix.json", "matrix.md"):
        (folder / name).write_bytes((ROOT / "docs" / name).read_bytes())
    return folder


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache whose reports are those of one real run of the toolkit's bridge (P1, 2 examples, over the socket),
    beside a fastmcp report made from the reference bridge's (and a stand-in for its environment's interpreter):
    `--reuse` then reads the very same cells for every run of a test, so their outputs compare byte for byte."""
    cache = tmp_path_factory.mktemp("matrix-cache")
    done = _matrix(
        "--only", "toolkit", "--property", "P1", "--examples", "2", "--cache", cache, "--no-write", cwd=cache
    )
    assert done.returncode == 0, done.stdout + done.stderr
    toolkit = json.loads((cache / "reports" / "toolkit.json").read_text())
    fastmcp = {"fastmcp": {**toolkit["reference"], "spec": FASTMCP}}
    (cache / "reports" / "fastmcp.json").write_text(json.dumps(fastmcp))
    python = cache / "fastmcp" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    return cache


def _shard(cache: Path, bridge: str, path: Path) -> None:
    done = _matrix(
        "--only",
        bridge,
        "--property",
        "P1",
        "--examples",
        "2",
        "--cache",
        cache,
        "--reuse",
        "--json",
        path,
        cwd=path.parent,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"::: shard of {bridge} written to {path}" in done.stdout


def test_shards_merged_write_what_the_unsharded_run_writes(reports: Path, tmp_path: Path) -> None:
    """Two shards (toolkit, fastmcp) merged, given in either order, write docs/matrix.md, matrix.json and matrix.html
    byte for byte as the one run of both bridges writes them; no shard run writes the docs."""
    whole = _published_copy(tmp_path / "whole")
    done = _matrix(
        "--only",
        "toolkit",
        "--only",
        "fastmcp",
        "--property",
        "P1",
        "--examples",
        "2",
        "--cache",
        reports,
        "--reuse",
        "--docs",
        whole,
        "--html",
        whole / "matrix.html",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shards = tmp_path / "shards"
    shards.mkdir()
    for bridge in ("toolkit", "fastmcp"):
        _shard(reports, bridge, shards / f"{bridge}.json")
    shard = json.loads((shards / "fastmcp.json").read_text())
    assert set(shard["bridges"]) == {"fastmcp"}
    assert shard["settings"] == {"examples": 2, "properties": ["P1"], "ci": False}
    assert shard["toolkit"]["version"] == _script().toolkit_version()["version"]
    merged = _published_copy(tmp_path / "merged")
    done = _matrix(
        "--merge",
        shards / "fastmcp.json",
        shards / "toolkit.json",
        "--docs",
        merged,
        "--html",
        merged / "matrix.html",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("matrix.json", "matrix.md", "matrix.html"):
        assert (merged / name).read_bytes() == (whole / name).read_bytes(), name
    assert (merged / "matrix.json").read_bytes() != (ROOT / "docs" / "matrix.json").read_bytes()  # it did write
    written = json.loads((merged / "matrix.json").read_text())
    labels = list(shard["bridges"]["fastmcp"])
    assert len(labels) == 2  # both eras
    assert all(
        written[label]["properties"]["P1"] == shard["bridges"]["fastmcp"][label]["properties"]["P1"] for label in labels
    )


def test_a_shard_covering_every_bridge_writes_the_whole_matrix(reports: Path, tmp_path: Path) -> None:
    """Shards of every bridge make a whole run, as `python scripts/matrix.py` with no --only: the columns are the
    shards' alone, none kept from the published matrix."""
    matrix = _script()
    cells = {"P1": {"status": "passed", "examples": 2, "seconds": 0.1}}
    by_bridge = {
        b.key: {f"{b.key}@1": {"spec": b.specs[0] if b.specs else b.driver, "properties": cells}}
        for b in matrix.BRIDGES
    }
    paths = []
    for key in by_bridge:
        paths.append(tmp_path / f"{key}.json")
        matrix.write_shard(paths[-1], matrix.Run({key: by_bridge[key]}, 100))
    run = matrix.merge_shards(list(reversed(paths)))
    assert not run.partial
    assert list(run.verdicts) == [f"{b.key}@1" for b in matrix.BRIDGES]
    some = matrix.merge_shards(paths[:2])
    assert some.partial  # as --only of those two: merged into the published cells


def _refusal(tmp_path: Path, change: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """`--merge` of a toolkit shard and a fastmcp shard whose fields are changed by `change`."""
    matrix = _script()
    cells = {"P1": {"status": "passed", "examples": 2, "seconds": 0.1}}
    matrix.write_shard(
        tmp_path / "a.json",
        matrix.Run(
            {
                "toolkit": {
                    "reference (mcp 2.3.0)": {
                        "spec": "mcp_testkit.adapters:ReferenceBridgeAdapter",
                        "properties": cells,
                    }
                }
            },
            2,
        ),
    )
    matrix.write_shard(
        tmp_path / "b.json", matrix.Run({"fastmcp": {"fastmcp@4.2.3": {"spec": FASTMCP, "properties": cells}}}, 2)
    )
    shard = json.loads((tmp_path / "b.json").read_text())
    for key, value in change.items():
        shard[key] = {**shard[key], **value} if isinstance(value, dict) else value
    (tmp_path / "b.json").write_text(json.dumps(shard))
    docs = _published_copy(tmp_path / "docs")
    done = _matrix("--merge", tmp_path / "a.json", tmp_path / "b.json", "--docs", docs, cwd=tmp_path)
    assert (docs / "matrix.json").read_bytes() == (ROOT / "docs" / "matrix.json").read_bytes()  # nothing written
    return done


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"toolkit": {"version": "0.0.1"}}, "b.json was run with toolkit version 0.0.1, commit "),
        ({"toolkit": {"commit": "0" * 40}}, ", commit 000000000000, but "),
        ({"settings": {"examples": 10}}, "b.json was run with settings --examples 10, every property, but "),
        ({"settings": {"properties": ["P1", "P2"]}}, "with settings --examples 2, --property P1 --property P2, but "),
        ({"bridges": {"toolkit": {}}}, "bridge 'toolkit' is in two shards"),
        ({"format": 0}, "b.json is not a shard of this script"),
    ],
    ids=["version", "commit", "examples", "properties", "twice", "not-a-shard"],
)
def test_a_merge_refuses_shards_of_another_run(tmp_path: Path, change: dict[str, Any], said: str) -> None:
    """Shards of another toolkit version or commit, other settings, a bridge given twice or a file that is no shard:
    exit status 2, one line on stderr naming the file and what differs, and nothing written."""
    done = _refusal(tmp_path, change)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("matrix.py --merge: ")
    assert said in done.stderr


def test_the_documented_ci_example_names_only_real_options() -> None:
    """docs/contract.md's GitHub Actions example (a job per bridge, then a merge) runs scripts/matrix.py with
    options and bridge keys the script has: each of its commands parses."""
    matrix = _script()
    page = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    yaml = re.search(r"## Spread over machines\n.*?```yaml\n(.*?)```", page, re.DOTALL)
    assert yaml is not None, "docs/contract.md has no GitHub Actions example under 'Spread over machines'"
    keys = re.search(r"bridge: \[(.*?)\]", yaml.group(1))
    assert keys is not None
    bridges = [key.strip() for key in keys.group(1).split(",")]
    assert bridges == [b.key for b in matrix.BRIDGES]
    commands = [line.split("run: ", 1)[1] for line in yaml.group(1).splitlines() if "scripts/matrix.py" in line]
    assert len(commands) == 2
    for command in commands:
        words = shlex.split(command.replace("${{ matrix.bridge }}", bridges[1]))
        assert words[:2] == ["python", "scripts/matrix.py"]
        words = ["shard.json" if word == "shards/*.json" else word for word in words[2:]]
        matrix.parser().parse_args(words)  # an unknown option or bridge exits here
    assert any("--json" in command for command in commands)
    assert any("--merge" in command for command in commands)
