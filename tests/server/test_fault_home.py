"""One home per fault: each fault's effect lives in `server/_effects/`, and nothing else tests a fault's class."""

from __future__ import annotations

import ast
from pathlib import Path

from mcp_testkit import faults
from mcp_testkit.server import _effects

PACKAGE = Path(faults.__file__).parent
HOME = PACKAGE / "server" / "_effects"
ALLOWED: set[Path] = set()


def _concrete_faults() -> set[str]:
    """Every subclass of `faults.Fault` but the base itself (private groups such as `_ListingFault` too)."""
    found: set[str] = set()
    pending = list(faults.Fault.__subclasses__())
    while pending:
        kind = pending.pop()
        found.add(kind.__name__)
        pending.extend(kind.__subclasses__())
    return found


def _names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _names(element)]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Name):
        return [node.id]
    return []


def _fault_checks(path: Path, concrete: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        f"{path.name}:{node.lineno}: isinstance(..., {name})"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        for name in _names(node.args[1])
        if name in concrete
    ]


def test_no_fault_isinstance_outside_its_home() -> None:
    """No module but the fault home asks whether a value is a concrete fault class: the effect says what to do."""
    concrete = _concrete_faults()
    found = [
        check
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(path.is_relative_to(allowed) for allowed in (HOME, *ALLOWED))
        for check in _fault_checks(path, concrete)
    ]
    assert found == [], "a fault's effect belongs in mcp_testkit/server/_effects/:\n" + "\n".join(found)


def test_the_walk_finds_a_fault_isinstance(tmp_path: Path) -> None:
    """The walk recognises `isinstance(x, faults.Drop)` and a tuple naming a fault, so the rule above can fail."""
    source = tmp_path / "probe.py"
    source.write_text("isinstance(a, faults.Drop)\nisinstance(b, (int, Crash))\nisinstance(c, faults.Fault)\n")
    assert _fault_checks(source, _concrete_faults()) == [
        "probe.py:1: isinstance(..., Drop)",
        "probe.py:2: isinstance(..., Crash)",
    ]


def test_every_fault_has_one_handler() -> None:
    """Each public fault class is registered with a handler of its own: one value plus one handler. The faults of
    the authorization server's endpoints (`oauth/...`) are answered by that server (`auth/_endpoints.py`), which
    sits below the server's effects, and need none."""
    public = {kind for name, kind in faults._KINDS.items() if name != "Fault"}
    endpoint = {kind for kind in public if kind.default_method in faults.AUTH_ENDPOINT_METHODS.values()}
    names = ["AuthServerError", "RejectRefresh", "SlowAuthServer", "WrongIssuer"]
    assert sorted(kind.__name__ for kind in endpoint) == names
    assert sorted(kind.__name__ for kind in public - endpoint - set(_effects.HANDLERS)) == []
    assert not endpoint & set(_effects.HANDLERS)


def test_no_fault_has_no_effect() -> None:
    """`effect_of(None)` is None, so a request without a fault skips every phase."""
    assert _effects.effect_of(None) is None
    effect = _effects.effect_of(faults.Delay(0.5))
    assert effect is not None
    assert effect.fault == faults.Delay(0.5)


def test_stdio_faults_are_declared_by_their_handlers() -> None:
    """The faults that mean something over stdio are the answer, listing, process, wait, size and byte faults."""
    over_stdio = {name for name, kind in faults._KINDS.items() if name != "Fault" and _effects.supports_stdio(kind())}
    listing = {name for name, kind in faults._KINDS.items() if kind.listing}
    answers = {"ErrorResult", "ProtocolError", "Delay", "LateAnswer", "TruncateBody", "MalformedLine", "Exit", "Crash"}
    waits = {"NeverAnswer", "Dribble", "ProgressOnly", "HugeResult", "StopReading"}
    byte_level = {"Latency", "Bandwidth", "Slice", "LimitData", "StdoutNoise"}  # not ResetPeer, SlowClose: HTTP only
    assert over_stdio == listing | answers | waits | byte_level


def test_transient_faults_are_declared() -> None:
    """Which transport faults a client may retry past is a declaration on the fault, not a list of classes."""
    garbling = (faults.Accepted, faults.TruncateBody, faults.MalformedSse)
    assert [kind.__name__ for kind in garbling if kind.transient] == []
    assert [kind.__name__ for kind in (faults.Drop, faults.LoseSession, faults.EndStream) if not kind.transient] == []
