"""A failure kept as a test: `keep_failure` writes, for a failed or hung verdict, a pytest file that replays exactly
that example through `replay_example` (the adapter's spec, the property, the era, the inputs as source) and, beside
it, the failing run's journal as JSON. Run alone, the file fails with the same counterexample; once the bridge is
fixed it passes, and can be committed as a regression test."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit.contract._inputs_source import inputs_source

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["adapter_spec", "failure_keeper", "keep_failure"]

_HEAD = """Kept failure: {pid} ({title}) {broke} for the bridge {bridge!r} in the {era} era, found by mcp-testkit \
{version} as {found_as}: {what}

Run it alone (`pytest {name}`): it fails with the same counterexample while the bridge does this, and passes once it \
is fixed; then commit it as a regression test. The journal of the failing run is {journal}."""


def keep_failure(
    result: PropertyResult,
    adapter: str | AdapterFactory,
    directory: str | os.PathLike[str],
    *,
    bridge: str | None = None,
    via: str = "asgi",
    clock: str | None = None,
    example_timeout_s: float | None = None,
) -> Path | None:
    """Write the test file that replays `result`'s counterexample (and its journal, as JSON beside it) into
    `directory`; its path, or None for a verdict with no example to replay (it held, or the bridge never connected).

    `adapter` is what the file makes the bridge with: a spec as `mcp-testkit check` takes it (a `file.py:Factory`
    spec relative to the current folder is written relative to `directory`), a driver's factory, or a factory
    importable by its module and name. `bridge` names the bridge in the file's name (default: the adapter's name).
    `ValueError` when an input has no source that evaluates back to it, or the factory cannot be named."""
    if result.status not in ("failed", "hung") or result.inputs is None:
        return None
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    label = bridge or _bridge_name(adapter)
    stem = f"test_kept_{_slug(label)}_{result.property_id.lower()}_{result.era}"
    source, imports = inputs_source(result.inputs)
    maker, more_imports = _adapter_source(adapter, folder)
    for module, names in more_imports.items():
        imports.setdefault(module, set()).update(names)
    found_as = result.found_as or "drawn"
    test = _test_source(result, label, stem, found_as, via, clock, example_timeout_s, source, imports, maker)
    path = folder / f"{stem}.py"
    path.write_text(test, encoding="utf-8")
    (folder / f"{stem}_journal.json").write_text(_journal_json(result, label, found_as), encoding="utf-8")
    return path


def _test_source(
    result: PropertyResult,
    label: str,
    stem: str,
    found_as: str,
    via: str,
    clock: str | None,
    example_timeout_s: float | None,
    inputs: str,
    imports: dict[str, set[str]],
    maker: tuple[str, list[str]],
) -> str:
    from mcp_testkit._version import __version__

    counterexample = result.counterexample or ""
    lines_of = counterexample.splitlines()
    what = lines_of[lines_of.index(")") + 1] if ")" in lines_of[:-1] else ""
    head = _HEAD.format(
        pid=result.property_id,
        title=result.title,
        broke="hung" if result.hung else "failed",
        bridge=label,
        era=result.era,
        version=__version__,
        found_as=found_as,
        what=(what or "see the journal").replace('"""', "'''").replace("\\", "\\\\"),
        name=f"{stem}.py",
        journal=f"{stem}_journal.json",
    )
    lines = ['"""' + _wrapped(head) + '\n"""', "", "from __future__ import annotations", ""]
    imports.setdefault("mcp_testkit.contract", set()).add("replay_example")
    lines += [f"from {module} import {', '.join(sorted(names))}" for module, names in sorted(imports.items())]
    adapter_line, options = maker
    options = [*options, "found_as=FOUND_AS", f"via={via!r}"]
    if clock is not None:
        options.append(f"clock={clock!r}")
    if example_timeout_s is not None:
        options.append(f"example_timeout_s={example_timeout_s!r}")
    arguments = [adapter_line, "PROPERTY", "ERA", "INPUTS", *options]
    call = "replay_example(\n" + "".join(f"        {argument},\n" for argument in arguments) + "    )"
    lines += [
        "",
        f"PROPERTY = {result.property_id!r}",
        f"ERA = {result.era!r}",
        f"FOUND_AS = {found_as!r}",
        f"INPUTS = {inputs}",
        "",
        "",
        f"def test_{result.property_id.lower()}_{result.era}_{_slug(label)}() -> None:",
        f'    """{result.property_id} holds for the bridge {label!r} in the {result.era} era on the example that '
        'broke it."""',
        f"    {call}",
        "",
    ]
    return "\n".join(lines)


def _wrapped(text: str) -> str:
    """The docstring's paragraphs, each wrapped at 116 columns."""
    import textwrap

    return "\n\n".join(textwrap.fill(part, 116, break_on_hyphens=False) for part in text.split("\n\n"))


def _adapter_source(adapter: Any, folder: Path) -> tuple[tuple[str, list[str]], dict[str, set[str]]]:
    """The expression the file makes the adapter with, the options of `replay_example` it needs, and its imports."""
    from mcp_testkit.adapters import DriverFactory

    if isinstance(adapter, DriverFactory):
        cwd = Path(adapter.cwd or os.getcwd()).resolve()
        where = Path(os.path.relpath(cwd, folder.resolve())).as_posix()
        made = f"DriverFactory({adapter.command!r}, cwd=Path(__file__).parent / {where!r})"
        return (made, []), {"mcp_testkit.adapters": {"DriverFactory"}, "pathlib": {"Path"}}
    spec = adapter if isinstance(adapter, str) else adapter_spec(adapter)
    module, _, attribute = spec.rpartition(":")
    if module.endswith(".py") or "/" in module:
        relative = Path(os.path.relpath(Path(module).resolve(), folder.resolve())).as_posix()
        return (repr(f"{relative}:{attribute}"), ["relative_to=__file__"]), {}
    return (repr(spec), []), {}


def adapter_spec(factory: Any) -> str:
    """`module:Name` of a factory importable by its module and qualified name; `ValueError` for one that is not (made
    in a function, or in `__main__`)."""
    module = getattr(factory, "__module__", None)
    name = getattr(factory, "__qualname__", None)
    if not module or not name or "<locals>" in name or module == "__main__":
        raise ValueError(
            f"keep_failures: the adapter factory {factory!r} cannot be named in a kept test file: define it at the "
            "top level of an importable module (not in a function or __main__), or give its spec as a string, "
            "module:Factory"
        )
    return f"{module}:{name}"


def _bridge_name(adapter: Any) -> str:
    if isinstance(adapter, str):
        return adapter.rpartition(":")[2]
    return str(getattr(adapter, "name", None) or getattr(adapter, "__name__", "bridge"))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "bridge"


def _journal_json(result: PropertyResult, label: str, found_as: str) -> str:
    from mcp_testkit._wire.strict_json import dumps

    document = {
        "property": result.property_id,
        "era": result.era,
        "bridge": label,
        "status": result.status,
        "found_as": found_as,
        "counterexample": result.counterexample,
        "journal": [record.to_json() for record in result.journal],
    }
    return dumps(document, default=repr, indent=1, ensure_ascii=False) + "\n"


def failure_keeper(
    directory: str | os.PathLike[str] | None,
    factory: Any,
    via: str,
    clock: str | None,
    example_timeout_s: float | None,
    server: object | None = None,
) -> Callable[[PropertyResult], Path | None]:
    """What `keep_failures=` of `run_contract` and `resilience_suite` does with each verdict (nothing without a
    directory); the factory is named at once, so one that cannot be is a `ValueError` before anything runs, as is a
    `server` of the caller's (a kept file replays on a fresh `TestMcpServer`)."""
    if directory is None:
        return lambda result: None
    if server is not None:
        raise ValueError("keep_failures=: a kept failure replays on a fresh TestMcpServer, so leave out server=")
    from mcp_testkit.adapters import DriverFactory

    adapter = factory if isinstance(factory, (str, DriverFactory)) else adapter_spec(factory)
    bridge = _bridge_name(factory)

    def keep(result: PropertyResult) -> Path | None:
        return keep_failure(
            result, adapter, directory, bridge=bridge, via=via, clock=clock, example_timeout_s=example_timeout_s
        )

    return keep
