"""docs/keep.md beyond running as printed (tests/examples/test_docs.py): the kept file the page shows is the one
`keep_failure` writes for the page's resending bridge (tests/contract/test_keep.py runs such files with pytest)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mcp_testkit.adapters import ReferenceBridgeAdapter
from mcp_testkit.contract import keep_failure, run_contract

from ._support import DOCS, example

PAGE = DOCS / "keep.md"


class Resending(ReferenceBridgeAdapter):
    """The page's bridge: it sends every failed call once more."""

    name = "resending"

    async def call(self, tool: str, arguments: Any) -> Any:
        outcome = await super().call(tool, arguments)
        if outcome.kind != "ok":
            outcome = await super().call(tool, arguments)
        return outcome


def _versionless(text: str) -> str:
    return re.sub(r"mcp-testkit \d+\.\d+\.\d+\S*", "mcp-testkit <version>", text)


def test_the_kept_file_shown_is_the_one_written(tmp_path: Path) -> None:
    """The page's kept file is, but for the version, what `keep_failure` writes for the resending bridge's P2
    failure."""
    (result,) = run_contract(Resending, properties=["P2"], eras=["handshake"])
    kept = keep_failure(result, "my_project.bridges:Resending", tmp_path, bridge="resending")
    assert kept is not None
    assert _versionless(kept.read_text()) == _versionless(example(PAGE, "kept-file"))
