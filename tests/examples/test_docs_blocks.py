"""The pages about the contract (docs/contract.md, docs/adapters.md, docs/tutorial.md) say only what the code does:
every block of theirs runs as a test (tests/examples/test_docs.py) or says why it cannot, and the counts and lists of
properties in their prose are the contract's own."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from mcp_testkit.contract import PROPERTIES, run_contract
from mcp_testkit.contract._cli._adapter_specs import SDK_AUTO, SDK_LEGACY
from mcp_testkit.contract._cli._expectations import KNOWN_FAILS

from .test_docs import CONTRACT_PAGES, PAGES, RUNS, Block, blocks

DOCS = Path(__file__).resolve().parents[2] / "docs"
NUMBERS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
NUMBERS += "seventeen eighteen nineteen twenty"
NUMBER_WORDS = NUMBERS.split()


def untested(block: Block) -> str | None:
    """Why `block` is not a test (None when it is one): a Python program, test file or module of a page, a console
    block of commands that run, or a block that says why it cannot run."""
    if block.not_run is not None:
        return None if block.not_run.strip() else "its `<!-- not run: -->` gives no reason"
    if block.language == "python":
        if block.pytester is not None or block.file is not None:
            return None
        tree = ast.parse(block.text)
        names = [
            t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)
        ]
        names += [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)]
        tests = [name for name in names if name.startswith(("test_", "Test"))]
        if tests:
            return f"it defines tests ({', '.join(tests)}) that only pytest runs: mark it `<!-- pytester: ... -->`"
        return None
    if block.language == "console":
        commands = [line[2:] for line in block.text.splitlines() if line.startswith("$ ")]
        other = [command for command in commands if command.split()[0] not in RUNS]
        if not commands or other:
            return f"its commands {other or commands} are not ones the tests run ({', '.join(RUNS)})"
        return None
    return f"a {block.language or 'plain'} block neither runs nor says why (`<!-- not run: reason -->`)"


CONTRACT_BLOCKS = [block for page in PAGES if page.name in CONTRACT_PAGES for block in blocks(page)]


@pytest.mark.parametrize("block", CONTRACT_BLOCKS, ids=[block.name for block in CONTRACT_BLOCKS])
def test_every_block_of_the_contract_pages_is_a_test(block: Block) -> None:
    """Each block of docs/contract.md, docs/adapters.md and docs/tutorial.md runs as a test, or says why not."""
    reason = untested(block)
    assert reason is None, f"{block.name}: {reason}"


def test_the_contract_pages_have_their_blocks() -> None:
    """The collection finds the three pages' blocks, so that the test above cannot pass on none."""
    assert {block.page.name for block in CONTRACT_BLOCKS} == set(CONTRACT_PAGES)


def test_a_block_that_is_no_test_is_found(tmp_path: Path) -> None:
    """A toml block without a reason, a Python block defining tests run as a program, a console block of another
    command and an empty reason are each reported; the same blocks marked as they should be are not."""
    page = tmp_path / "page.md"
    page.write_text(
        "```toml\n[project]\n```\n\n```python\ntest_x = 1\n```\n\n```console\n$ pip install x\n```\n\n"
        "<!-- not run:  -->\n```toml\n[x]\n```\n\n"
        "<!-- not run: a pyproject snippet -->\n```toml\n[project]\n```\n\n"
        "<!-- pytester: passed=* -->\n```python\ndef test_x():\n    pass\n```\n\n"
        "```console\n$ mcp-testkit check --help\n```\n"
    )
    reasons = [untested(block) for block in blocks(page)]
    assert [reason is None for reason in reasons] == [False, False, False, False, True, True, True]
    assert "test_x" in str(reasons[1])
    assert "pip install x" in str(reasons[2])
    assert "no reason" in str(reasons[3])


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_count_of_promises_is_the_contracts() -> None:
    """docs/contract.md's intro counts as many promises as the contract has properties, and names those that need
    a capability as the properties' `requires` say."""
    intro = _words((DOCS / "contract.md").read_text(encoding="utf-8").split("## The properties")[0])
    counted = re.search(r"states (\w+) such promises", intro)
    assert counted is not None, "docs/contract.md: no 'states N such promises' in the intro"
    assert counted[1] == NUMBER_WORDS[len(PROPERTIES)], f"the intro says {counted[1]}; there are {len(PROPERTIES)}"
    needing = re.search(r"Some apply only to a bridge that has what they need: (.*?) \(see", intro)
    assert needing is not None, "docs/contract.md: no sentence naming the properties that need a capability"
    named = set(re.findall(r"\bP\d+s?\b", needing[1]))
    assert named == {pid for pid, prop in PROPERTIES.items() if prop.requires is not None}


def _failures(known: dict[str, tuple[str, ...] | str]) -> set[str]:
    return {pid for era in known.values() if not isinstance(era, str) for pid in era}


def test_the_expected_failures_on_the_contract_page_are_the_known_ones() -> None:
    """The `expect_fail` lists of docs/contract.md's pytest example, and the failures its section on the SDK client
    lists, are the ones `mcp-testkit check` expects of the SDK client (which its run compares with the verdicts)."""
    text = (DOCS / "contract.md").read_text(encoding="utf-8")
    suite = next(block for block in blocks(DOCS / "contract.md") if block.pytester and "expect_fail" in block.text)
    lists = [set(ast.literal_eval(found)) for found in re.findall(r"expect_fail=(\[[^\]]*\])", suite.text)]
    assert lists == [_failures(KNOWN_FAILS[SDK_AUTO]), _failures(KNOWN_FAILS[SDK_LEGACY])]
    section = text.split("## The SDK client's verdicts")[1].split("\n## ")[0]
    listed = set(re.findall(r"^- \*\*(P\d+s?)\*\*", section.split("It fails:")[1], re.M))
    assert listed == _failures(KNOWN_FAILS[SDK_AUTO])


def test_the_tutorial_says_what_its_bridge_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tutorial's sentence on what Toolbox fails names the properties a run of the contract on the page's own
    Toolbox fails in the handshake era (its console block shows the same from `mcp-testkit check`)."""
    page = DOCS / "tutorial.md"
    said = re.search(r"Toolbox fails ((?:P\d+s?(?:, | and )?)+) in the handshake era", _words(page.read_text()))
    assert said is not None, "docs/tutorial.md: no sentence 'Toolbox fails P1, ... in the handshake era'"
    for block in blocks(page):
        if block.file is not None:
            (tmp_path / block.file).write_text(block.text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        from toolbox_adapter import ToolboxAdapter  # type: ignore[import-not-found]

        results = run_contract(ToolboxAdapter, eras=["handshake"], max_examples=10)
    finally:
        for module in ("toolbox", "toolbox_adapter"):
            sys.modules.pop(module, None)
    failed = {result.property_id for result in results if result.failed}
    assert set(re.findall(r"P\d+s?", said[1])) == failed


def test_the_reference_bridges_limits_on_the_contract_page_are_its_defaults() -> None:
    """The waits and the size limit docs/contract.md gives the reference bridge are its `ServerConfig` defaults and
    `ReferenceBridgeAdapter`'s declaration."""
    from mcp_testkit.adapters import ReferenceBridgeAdapter
    from mcp_testkit.bridge import ServerConfig

    text = _words((DOCS / "contract.md").read_text(encoding="utf-8"))
    waits = re.search(r"`timeout_s` \((\d+) s by default\) and a connect at most `connect_timeout_s` \((\d+) s\)", text)
    sizes = re.search(r"\((\d+) MiB by default, (\d+) MiB in `ReferenceBridgeAdapter`\)", text)
    assert waits is not None, "docs/contract.md: the reference bridge's waits are not stated"
    assert sizes is not None, "docs/contract.md: the reference bridge's size limit is not stated"
    config = ServerConfig(name="srv", url="http://127.0.0.1/mcp")
    assert (float(waits[1]), float(waits[2])) == (config.timeout_s, config.connect_timeout_s)
    adapter = ReferenceBridgeAdapter()
    assert (int(sizes[1]) * 2**20, int(sizes[2]) * 2**20) == (config.max_result_bytes, adapter.max_result_bytes)
