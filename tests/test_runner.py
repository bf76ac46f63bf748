"""The canary on uvicorn's internals: the installed uvicorn still has every private class, method, parameter and
attribute that ``mcp_testkit/_runner.py`` relies on (``UVICORN_INTERNALS``), and the pin is the tested range."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from packaging.requirements import Requirement
from packaging.version import Version

from mcp_testkit._wire import runner as _runner
from mcp_testkit._wire.runner import UVICORN_INTERNALS, UVICORN_TESTED, UvicornInternal

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
WIDEN = "check mcp_testkit/_runner.py against it before widening the pin (UVICORN_TESTED and pyproject.toml)"


def _class(path: str) -> type[Any]:
    """The uvicorn class at ``path``; fails naming it when the release has moved or removed it."""
    module, _, name = path.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        pytest.fail(f"uvicorn {uvicorn.__version__} has no {path}, which mcp_testkit/_runner.py subclasses; {WIDEN}")
    assert isinstance(found, type)
    return found


def _assigned(cls: type[Any], *, inherited: bool = True) -> set[str]:
    """The names a class defines or assigns on ``self`` anywhere in its source (and its bases' when ``inherited``)."""
    names: set[str] = set()
    for klass in cls.__mro__ if inherited else (cls,):
        if klass is object:
            continue
        names |= set(vars(klass))
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        for node in ast.walk(ast.parse(source)):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                for part in ast.walk(target) if isinstance(target, ast.AST) else ():
                    if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                        names.add(part.attr)
    return {name for name in names if not name.startswith("__") or name == "__init__"}


def _parameters(function: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)


def _ids(internal: UvicornInternal) -> str:
    return internal.path.removeprefix("uvicorn.").removeprefix("protocols.http.")


def test_the_pin_in_pyproject_is_the_tested_range() -> None:
    """pyproject.toml pins uvicorn to UVICORN_TESTED, and the installed uvicorn is inside it."""
    # A line of the dependencies list (tomllib is not in Python 3.10's standard library).
    [line] = re.findall(r'^\s*"(uvicorn\b[^"]*)",', PYPROJECT.read_text(), re.MULTILINE)
    pin = Requirement(line)
    assert str(pin.specifier) == str(Requirement(f"uvicorn{UVICORN_TESTED}").specifier), (
        f"pyproject.toml pins {pin}, mcp_testkit/_runner.py says it was tested with uvicorn{UVICORN_TESTED}"
    )
    assert Version(uvicorn.__version__) in pin.specifier, (
        f"uvicorn {uvicorn.__version__} is installed, outside the tested range {pin.specifier}"
    )


def _changed_methods(internal: UvicornInternal) -> list[str]:
    """What the installed uvicorn changed in the methods ``internal`` lists: one phrase per method."""
    cls = _class(internal.path)
    changed = []
    for name, expected in internal.methods.items():
        method = getattr(cls, name, None)
        if method is None:
            changed.append(f"has no {cls.__name__}.{name}({', '.join(expected)})")
        elif _parameters(method) != expected:
            found = ", ".join(_parameters(method))
            changed.append(f"changed {cls.__name__}.{name}({', '.join(expected)}) to {name}({found})")
    return changed


@pytest.mark.parametrize("internal", [i for i in UVICORN_INTERNALS if i.methods], ids=_ids)
def test_uvicorn_keeps_the_methods_the_runner_overrides_or_calls(internal: UvicornInternal) -> None:
    """Each method the runner overrides or calls is still there, with the parameters the runner passes."""
    changed = _changed_methods(internal)
    assert not changed, f"uvicorn {uvicorn.__version__} " + "; ".join(changed) + f"; {WIDEN}"


def test_the_canary_names_a_changed_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    """A uvicorn whose H11Protocol.data_received takes another parameter is named, method and parameters."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    def data_received(self: Any, data: bytes, more: bool) -> None: ...

    monkeypatch.setattr(H11Protocol, "data_received", data_received)
    [h11] = [i for i in UVICORN_INTERNALS if i.path.endswith(".H11Protocol")]
    assert _changed_methods(h11) == [
        "changed H11Protocol.data_received(self, data) to data_received(self, data, more)"
    ]


@pytest.mark.parametrize("internal", [i for i in UVICORN_INTERNALS if i.keywords], ids=_ids)
def test_uvicorn_takes_the_keywords_the_runner_passes(internal: UvicornInternal) -> None:
    """Each keyword the runner passes to a uvicorn constructor is still one of its parameters."""
    cls = _class(internal.path)
    gone = [name for name in internal.keywords if name not in _parameters(cls)]
    assert not gone, (
        f"uvicorn {uvicorn.__version__} changed {cls.__name__}(...): it no longer takes {', '.join(gone)}; {WIDEN}"
    )


@pytest.mark.parametrize("internal", [i for i in UVICORN_INTERNALS if i.reads], ids=_ids)
def test_uvicorn_still_sets_the_attributes_the_runner_reads(internal: UvicornInternal) -> None:
    """Each attribute the runner reads on a uvicorn object is still defined or assigned by its class."""
    cls = _class(internal.path)
    gone = [name for name in internal.reads if name not in _assigned(cls)]
    assert not gone, (
        f"uvicorn {uvicorn.__version__} changed {cls.__name__}: it no longer sets "
        + ", ".join(f"self.{name}" for name in gone)
        + f", which mcp_testkit/_runner.py reads; {WIDEN}"
    )


@pytest.mark.parametrize("internal", [i for i in UVICORN_INTERNALS if i.adds], ids=_ids)
def test_uvicorn_leaves_free_the_names_the_runner_adds(internal: UvicornInternal) -> None:
    """No name the runner's subclass adds is one uvicorn's class uses itself (ours would silently replace it)."""
    cls = _class(internal.path)
    taken = sorted(set(internal.adds) & _assigned(cls))
    assert not taken, (
        f"uvicorn {uvicorn.__version__} changed {cls.__name__}: it now uses {', '.join(taken)} itself, which "
        f"the subclass in mcp_testkit/_runner.py also defines; rename ours, then {WIDEN}"
    )


@pytest.mark.parametrize(
    ("subclass", "path"),
    [
        pytest.param(_runner._server_class, "uvicorn.server.Server", id="Server"),
        pytest.param(lambda: _runner._protocol(1.0, 1.0, _runner.HeadLimits()), None, id="Protocol"),
        pytest.param(lambda: _runner._protocol(1.0, 1.0, _runner.HeadLimits(), h11=True), None, id="H11Protocol"),
    ],
)
def test_the_fence_lists_everything_the_runner_overrides_and_adds(subclass: Any, path: str | None) -> None:
    """Every uvicorn method the runner's subclasses override, and every name they add, is in UVICORN_INTERNALS."""
    built = subclass()
    at = next(n for n, klass in enumerate(built.__mro__) if klass.__module__.startswith("uvicorn."))
    base = built.__mro__[at]
    path = path or f"{base.__module__}.{base.__qualname__}"
    [internal] = [i for i in UVICORN_INTERNALS if i.path == path]
    ours = set().union(*(_assigned(klass, inherited=False) for klass in built.__mro__[:at]))
    theirs = _assigned(base)
    unlisted = sorted((ours & theirs) - set(internal.methods) - set(internal.reads))
    unlisted += sorted(ours - theirs - set(internal.adds))
    assert not unlisted, (
        f"mcp_testkit/_runner.py's {built.__name__} overrides or adds {', '.join(unlisted)} on {path}, which "
        "UVICORN_INTERNALS does not list: add them there, so the canary watches them"
    )
