"""The distribution's metadata as pyproject.toml declares it, read without building: the name the version is
looked up by, the licence that ships, the files the wheel must carry, the changelog's entry for the version.

`scripts/check_package.py` (CI) builds the wheel and the sdist and installs them; these checks are the cheap
half, so that a drift shows in the test run before the build."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from mcp_testkit._version import DISTRIBUTION

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest brings tomli where the standard library has no tomllib
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mcp_testkit"


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _project() -> dict[str, Any]:
    project: dict[str, Any] = _pyproject()["project"]
    return project


def test_the_version_is_read_by_the_distributions_name() -> None:
    """`_version.DISTRIBUTION`, the name `__version__` is looked up by, is pyproject's `[project] name`."""
    assert _project()["name"] == DISTRIBUTION


def test_the_name_is_not_the_one_taken_on_the_index() -> None:
    """The distribution is not called `mcp-testkit`, somebody else's project on the package index; the import
    name and the command keep the toolkit's own name."""
    project = _project()
    assert project["name"] != "mcp-testkit"
    assert project["scripts"] == {"mcp-testkit": "mcp_testkit.cli:main"}
    assert project["entry-points"]["pytest11"] == {"mcp_testkit": "mcp_testkit.pytest_plugin"}


def test_the_license_is_mit_and_ships() -> None:
    """`license` is the SPDX expression MIT, LICENSE is the MIT text of the toolkit's authors, and
    `license-files` puts it into the wheel and the sdist."""
    project = _project()
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) the mcp-testkit authors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_build_backend_reads_an_spdx_license() -> None:
    """The setuptools the build asks for reads `license` as an SPDX expression and `license-files` (77 and
    later), and no `License ::` classifier stands beside it, which that setuptools refuses."""
    requirement = Requirement(_pyproject()["build-system"]["requires"][0])
    assert requirement.name == "setuptools"
    floor = min(Version(spec.version) for spec in requirement.specifier if spec.operator == ">=")
    assert floor >= Version("77")
    assert not [c for c in _project()["classifiers"] if c.startswith("License ::")]


def test_the_python_classifiers_match_requires_python() -> None:
    """Each `Programming Language :: Python :: 3.N` classifier is a version `requires-python` admits, and the
    oldest one listed is the oldest it admits."""
    admitted = SpecifierSet(_project()["requires-python"])
    listed = [
        Version(c.rpartition(" :: ")[2])
        for c in _project()["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert listed
    assert all(version in admitted for version in listed)
    assert Version(f"3.{min(v.minor for v in listed) - 1}") not in admitted


def test_the_urls_point_into_the_repository() -> None:
    """`[project.urls]` names the repository mkdocs.yml names, and the changelog it points at is this page."""
    urls = _project()["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Source", "Changelog"}
    repo = re.search(r"^repo_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert repo is not None
    assert all(url.startswith(repo.group(1)) for url in urls.values())
    assert urls["Changelog"] == f"{repo.group(1)}/blob/main/docs/changes.md"
    assert (ROOT / "docs" / "changes.md").is_file()


def test_the_changelog_opens_with_this_version() -> None:
    """docs/changes.md's first release entry is pyproject's version, and it names the distribution."""
    text = (ROOT / "docs" / "changes.md").read_text(encoding="utf-8")
    first = re.search(r"^## (\S+)$", text, re.M)
    assert first is not None
    assert first.group(1) == _project()["version"]
    assert f"pip install {DISTRIBUTION}" in text


def test_every_data_file_is_package_data() -> None:
    """`py.typed` and every JSON schema under mcp_testkit/ match a package-data pattern, so the wheel has them."""
    patterns: dict[str, list[str]] = _pyproject()["tool"]["setuptools"]["package-data"]
    data = [p for p in PACKAGE.rglob("*") if p.suffix == ".json" or p.name == "py.typed"]
    assert PACKAGE / "py.typed" in data
    assert PACKAGE / "scenario" / "scenario.schema.json" in data
    missing = []
    for path in data:
        package = ".".join(path.parent.relative_to(ROOT).parts)
        if not any(path.match(pattern) for pattern in patterns.get(package, [])):
            missing.append(str(path.relative_to(ROOT)))
    assert missing == []


@pytest.mark.parametrize("where", ["README.md", "docs", "mcp_testkit"])
def test_every_install_line_names_the_distribution(where: str) -> None:
    """No page, docstring or message tells a user to `pip install mcp-testkit`, which installs another project."""
    place = ROOT / where
    files = [place] if place.is_file() else [*place.rglob("*.md"), *place.rglob("*.py")]
    wrong = re.compile(r"pip install ['\"]?mcp-testkit\b")
    texts = {path: path.read_text(encoding="utf-8") for path in files}
    found = [f"{path.relative_to(ROOT)}: {m.group(0)}" for path, text in texts.items() for m in wrong.finditer(text)]
    assert found == []
    if where == "README.md":
        assert f"`pip install {DISTRIBUTION}`" in place.read_text(encoding="utf-8")
