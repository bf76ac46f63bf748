"""Count the conditions in the package that test the protocol era: how far era-specific behaviour is scattered.

A condition is the test of an `if`/`elif`, a conditional expression, a `while` or a comprehension's `if`, or a
`match` subject, whose source names an era: "handshake" or "stateless" in any case and as part of any name
(`HANDSHAKE`, `serves_stateless`), or an `era`/`eras` name or attribute.
Usage: `python scripts/era_conditions.py [PACKAGE_DIR] [--files]`.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

_ERA = re.compile(r"(?i)handshake|stateless|\beras?\b|_eras?\b")


def conditions(path: Path) -> list[int]:
    """The line of each era condition in `path`."""
    source = path.read_text(encoding="utf-8")
    tests: list[ast.expr] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
        elif isinstance(node, ast.Match):
            tests.append(node.subject)
    return sorted(t.lineno for t in tests if _ERA.search(ast.get_source_segment(source, t) or ""))


def main(argv: list[str]) -> int:
    root = Path(next((a for a in argv if not a.startswith("-")), "mcp_testkit"))
    per_file = {p: conditions(p) for p in sorted(root.rglob("*.py"))}
    per_file = {p: lines for p, lines in per_file.items() if lines}
    if "--files" in argv:
        for path, lines in sorted(per_file.items(), key=lambda item: -len(item[1])):
            print(f"{len(lines):4d}  {path}")
    print(f"{sum(map(len, per_file.values()))} era conditions in {len(per_file)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
