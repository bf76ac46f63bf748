"""The package as a user gets it: builds the sdist and the wheel from the repository's files, checks them, installs
the wheel (not editable) into a fresh virtual environment and tries it there.

    python scripts/check_package.py               # what CI runs (.ci/run), in a temporary folder
    python scripts/check_package.py --work DIR    # in DIR, kept afterwards (the archives and the venvs)

Steps, each timed, in order; the first that fails ends the run, named, with the output of what it ran:

- copy: the files git tracks, as they are in the working tree, into a folder of their own (a clean clone's
  tree: nothing ignored, nothing built, no egg-info), and a second copy without `mcp_testkit/` for the tests;
- tools: `build`, `twine` and `trove-classifiers` in a virtual environment of their own;
- build: `python -m build` (the sdist, then the wheel from the sdist), with no deprecation warning;
- twine: `twine check --strict` on both archives;
- contents: LICENSE in the wheel and the sdist, `py.typed` and every JSON schema of the source tree in the
  wheel, and the wheel's metadata (name, version, SPDX licence, classifiers the index knows) as pyproject says;
- install: the wheel into a fresh virtual environment, then `pip check`;
- version: `mcp-testkit --version` prints pyproject's version, with `mcp_testkit` imported from that environment;
- plugin: pytest, in an empty folder with no project and no ini file, loads the plugin by its entry point and
  a test using the `mcp_server` fixture passes (`-p no:cacheprovider`);
- smoke: the `[dev]` extras added, a smoke set of the repository's tests (the server, the plugin, the bridge and
  the command line) run from the copy without `mcp_testkit/`, so that the package comes from the wheel: the
  step prints `mcp_testkit.__file__` as a Python in that folder imports it and the file that pytest run loaded the
  plugin from (`--trace-config`), and fails unless both are the environment's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest brings tomli where the standard library has no tomllib
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ["build", "twine", "trove-classifiers"]
SMOKE = [
    "tests/server/test_tools.py",
    "tests/plugin/test_fixtures.py",
    "tests/bridge/test_pool.py",
    "tests/test_cli.py",
]
"""The server's answer kinds, the plugin's fixtures (pytester), the bridge's pool and the command line: none needs
Node.js or chromium, and together they run in well under two minutes on two cores."""
COMMAND_TIMEOUT_S = 900.0

PLUGIN_TEST = '''"""Nothing here but this file: pytest finds the plugin by its entry point."""

import httpx2

HEADERS = {"accept": "application/json, text/event-stream"}
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def test_mcp_server_answers_a_scripted_tool(mcp_server):
    """The fixture serves a scripted tool over loopback, and its journal saw the call."""
    mcp_server.tool("echo", returns=lambda arguments: arguments["text"])
    with httpx2.Client(headers=HEADERS) as client:
        answer = client.post(mcp_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
        answer.raise_for_status()
        session = {"mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        params = {"name": "echo", "arguments": {"text": "hi"}}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        result = client.post(mcp_server.url, json=body, headers=session).json()["result"]
    assert result["content"][0]["text"] == "hi"
    mcp_server.journal.assert_called("echo", times=1, arguments={"text": "hi"})
'''

WHERE_FROM = """import sys
sys.path[:0] = ["tests"]  # where pytest puts the suite's conftest: no mcp_testkit/ may be found there either
import mcp_testkit
print(mcp_testkit.__file__)
"""

KNOWN_CLASSIFIERS = """import json, sys, trove_classifiers
print(json.dumps(sorted(set(json.load(sys.stdin)) - trove_classifiers.classifiers)))
"""
"""The classifiers read from stdin that the package index does not know (twine does not check them; an upload would
be refused)."""


class StepFailed(Exception):
    """A step found the package wrong: the message says what, and the output of the command that showed it."""


@dataclass
class Run:
    """The folders and facts the steps share."""

    work: Path
    project: dict[str, object] = field(default_factory=dict)

    @property
    def src(self) -> Path:
        return self.work / "src"

    @property
    def suite(self) -> Path:
        return self.work / "suite"

    @property
    def dist(self) -> Path:
        return self.work / "dist"

    def tool(self, name: str) -> str:
        return str(self.work / "tools" / "bin" / name)

    def user(self, name: str) -> str:
        return str(self.work / "user" / "bin" / name)

    @property
    def name(self) -> str:
        return str(self.project["name"])

    @property
    def version(self) -> str:
        return str(self.project["version"])

    @property
    def stem(self) -> str:
        """The archives' name before the suffix (the distribution's name normalised, and the version)."""
        return f"{self.name.replace('-', '_')}-{self.version}"

    @property
    def wheel(self) -> Path:
        return self.dist / f"{self.stem}-py3-none-any.whl"

    @property
    def sdist(self) -> Path:
        return self.dist / f"{self.stem}.tar.gz"


def _environment(run: Run) -> dict[str, str]:
    """The environment a user's shell would have: no PYTHONPATH or virtual environment of the caller (which would
    put a checkout's `mcp_testkit` first), the user's venv first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env["PATH"] = os.pathsep.join([str(run.work / "user" / "bin"), env.get("PATH", "")])
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(run: Run, command: Sequence[str], cwd: Path | None = None, stdin: str | None = None, **env: str) -> str:
    """Run a command, print it, and return its output (stdout and stderr together); `StepFailed` with that
    output when it exits non-zero."""
    shown = [word if "\n" not in word else repr(word.splitlines()[-1] + " ...") for word in command]
    print("+", " ".join(shown), flush=True)
    try:
        done = subprocess.run(
            list(command),
            cwd=cwd or run.work,
            env={**_environment(run), **env},
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise StepFailed(f"{command[0]} ran over {COMMAND_TIMEOUT_S:.0f} s:\n{exc.output or ''}") from None
    if done.returncode != 0:
        raise StepFailed(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}")
    return done.stdout


def copy(run: Run) -> None:
    """The files git tracks, as the working tree has them, into src/ (to build) and suite/ (to test, without
    `mcp_testkit/`)."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        raise StepFailed(f"git ls-files found no repository at {ROOT}: {listed.stderr.strip()}")
    files = [name for name in listed.stdout.split("\0") if name and (ROOT / name).is_file()]
    for name in files:
        for into in (run.src, run.suite):
            if into == run.suite and name.startswith("mcp_testkit/"):
                continue
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)
    run.project = tomllib.loads((run.src / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    print(f"{len(files)} files; {run.name} {run.version}")


def tools(run: Run) -> None:
    """A virtual environment with the build and check tools, apart from the one the package goes into."""
    _run(run, [sys.executable, "-m", "venv", str(run.work / "tools")])
    _run(run, [run.tool("python"), "-m", "pip", "install", "-q", *TOOLS])


def build(run: Run) -> None:
    """The sdist, then the wheel built from it; setuptools may not warn of anything deprecated."""
    output = _run(run, [run.tool("python"), "-m", "build", "--outdir", str(run.dist), str(run.src)])
    # build prints a backend's warning as `WARNING <message>`; run without it, as `<Category>Warning: <message>`
    warned = sorted({line.strip() for line in output.splitlines() if re.match(r"WARNING |\S*Warning: ", line)})
    for line in warned:
        print(line)
    deprecated = [line for line in warned if re.search("deprecat", line, re.I)]
    if deprecated:
        raise StepFailed("the build warned of something deprecated:\n" + "\n".join(deprecated))
    built = sorted(path.name for path in run.dist.iterdir())
    if built != sorted([run.wheel.name, run.sdist.name]):
        raise StepFailed(f"expected {run.wheel.name} and {run.sdist.name}, the build made {built}")
    print("built", ", ".join(built))


def twine(run: Run) -> None:
    """`twine check --strict`: the metadata and the long description render on the package index."""
    command = [run.tool("twine"), "--no-color", "check", "--strict", str(run.wheel), str(run.sdist)]
    print(_run(run, command, COLUMNS="400").strip())  # one line per archive, as a log reads best


def contents(run: Run) -> None:
    """What each archive must carry, and the wheel's metadata as pyproject declares it."""
    with zipfile.ZipFile(run.wheel) as wheel:
        names = set(wheel.namelist())
        info = f"{run.stem}.dist-info"
        metadata = wheel.read(f"{info}/METADATA").decode()
    schemas = {str(path.relative_to(run.src)) for path in (run.src / "mcp_testkit").rglob("*.json")}
    wanted = {f"{info}/licenses/LICENSE", "mcp_testkit/py.typed", *schemas}
    missing = sorted(wanted - names)
    if missing:
        raise StepFailed(f"the wheel lacks {', '.join(missing)}")
    with tarfile.open(run.sdist) as sdist:
        if f"{run.stem}/LICENSE" not in sdist.getnames():
            raise StepFailed(f"the sdist lacks {run.stem}/LICENSE")
    fields = _fields(metadata)
    expected = {"Name": [run.name], "Version": [run.version], "License-Expression": [str(run.project["license"])]}
    wrong = {key: fields.get(key) for key, value in expected.items() if fields.get(key) != value}
    if wrong:
        raise StepFailed(f"the wheel's METADATA says {wrong}, pyproject says {expected}")
    classifiers = fields.get("Classifier", [])
    unknown = json.loads(_run(run, [run.tool("python"), "-c", KNOWN_CLASSIFIERS], stdin=json.dumps(classifiers)))
    if unknown:
        raise StepFailed(f"classifiers the package index does not know: {unknown}")
    print(
        f"wheel: {len(names)} files, LICENSE, py.typed and {len(schemas)} JSON schemas; sdist: LICENSE; "
        f"{len(classifiers)} known classifiers, License-Expression {fields['License-Expression'][0]}"
    )


def _fields(metadata: str) -> dict[str, list[str]]:
    """The header fields of a METADATA file (the part before the long description), by name."""
    fields: dict[str, list[str]] = {}
    for line in metadata.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(": ")
        fields.setdefault(key, []).append(value)
    return fields


def install(run: Run) -> None:
    """The wheel, not editable, into a fresh virtual environment, with its dependencies from the index."""
    _run(run, [sys.executable, "-m", "venv", str(run.work / "user")])
    _run(run, [run.user("python"), "-m", "pip", "install", "-q", str(run.wheel)])
    print(_run(run, [run.user("python"), "-m", "pip", "check"]).strip())


def version(run: Run) -> None:
    """`mcp-testkit --version` prints pyproject's version, from the installed package."""
    printed = _run(run, [run.user("mcp-testkit"), "--version"], cwd=run.work).strip()
    print(printed)
    if printed != f"mcp-testkit {run.version}":
        raise StepFailed(f"mcp-testkit --version printed {printed!r}, pyproject says {run.version}")
    _imported_from_the_environment(run, run.work)


def plugin(run: Run) -> None:
    """pytest in a folder with nothing but one test file: the plugin comes by its entry point, from the wheel."""
    empty = run.work / "empty"
    empty.mkdir()
    (empty / "test_plugin.py").write_text(PLUGIN_TEST, encoding="utf-8")
    command = [run.user("pytest"), "-p", "no:cacheprovider", "-W", "error", "--trace-config", "test_plugin.py"]
    output = _run(run, command, cwd=empty)
    _plugin_from_the_environment(run, output)
    # No conftest, no -p, no ini file: pytest found it among the distributions' entry points, which it lists so.
    if not re.search(rf"^\s*{re.escape(run.name)}-{re.escape(run.version)} at ", output, re.M):
        raise StepFailed(f"pytest did not list {run.name}-{run.version} among the plugins of entry points:\n{output}")
    print(output.strip().splitlines()[-1])
    if "configfile:" in output or not re.search(r"\b1 passed\b", output):
        raise StepFailed(f"expected one test passed and no ini file:\n{output}")


def smoke(run: Run) -> None:
    """The `[dev]` extras beside the wheel, then the smoke set from the copy that has no `mcp_testkit/`."""
    _run(run, [run.user("python"), "-m", "pip", "install", "-q", f"{run.wheel}[dev]"])
    if (run.suite / "mcp_testkit").exists():
        raise StepFailed(f"{run.suite} holds a mcp_testkit/ that the tests would import instead of the wheel's")
    _imported_from_the_environment(run, run.suite)
    output = _run(run, [run.user("pytest"), "-q", "--trace-config", *SMOKE], cwd=run.suite)
    _plugin_from_the_environment(run, output)
    print(output.strip().splitlines()[-1])


def _plugin_from_the_environment(run: Run, output: str) -> None:
    """The file a pytest run imported the plugin from, as `--trace-config` lists it; `StepFailed` unless it is the
    user venv's."""
    loaded = re.search(r"^PLUGIN registered: <module 'mcp_testkit\.pytest_plugin' from '([^']+)'>$", output, re.M)
    if loaded is None:
        raise StepFailed(f"pytest did not load mcp_testkit's plugin:\n{output}")
    print("pytest imported the plugin from", loaded.group(1))
    if not Path(loaded.group(1)).is_relative_to(run.work / "user"):
        raise StepFailed(f"the plugin came from {loaded.group(1)}, not from the installed wheel in {run.work / 'user'}")


def _imported_from_the_environment(run: Run, cwd: Path) -> None:
    """Print `mcp_testkit.__file__` as a run in `cwd` imports it; `StepFailed` unless it is the user venv's."""
    where = Path(_run(run, [run.user("python"), "-c", WHERE_FROM], cwd=cwd).strip())
    print("mcp_testkit imported from", where)
    if not where.is_relative_to(run.work / "user"):
        raise StepFailed(f"mcp_testkit came from {where}, not from the installed wheel in {run.work / 'user'}")


STEPS: list[Callable[[Run], None]] = [copy, tools, build, twine, contents, install, version, plugin, smoke]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="an empty folder to work in, kept afterwards (default: temporary)")
    options = parser.parse_args(argv)
    if options.work is not None:
        options.work.mkdir(parents=True, exist_ok=True)
        if any(options.work.iterdir()):
            parser.error(f"--work {options.work} is not empty")
        return _steps(Run(options.work.resolve()))
    with tempfile.TemporaryDirectory(prefix="mcp-testkit-package.") as work:
        return _steps(Run(Path(work)))


def _steps(run: Run) -> int:
    started = time.perf_counter()
    for step in STEPS:
        print(f"::: package: {step.__name__}", flush=True)
        began = time.perf_counter()
        try:
            step(run)
        except StepFailed as exc:
            print(f"::: package: step '{step.__name__}' failed after {time.perf_counter() - began:.1f} s: {exc}")
            return 1
        print(f"::: done in {time.perf_counter() - began:.1f} s: package: {step.__name__}", flush=True)
    print(f"::: package: {run.name} {run.version} built, checked and tried in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
