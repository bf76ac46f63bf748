"""What the journal says of the client's conformance: the referee's violations of every record
(`Record.violations`, the rules in `_wire/referee.py`) and the assertion that there are none."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from mcp_testkit._wire.referee import RULES, Violation
from mcp_testkit.journal._record import Record

__all__ = ["Conformance", "broken"]


class Conformance:
    """The journal's part that reads its records' violations (`Journal` is one)."""

    def _views(self) -> list[Record]:
        raise NotImplementedError

    @property
    def violations(self) -> list[Violation]:
        """Every referee rule the client's messages broke, in arrival order, each with its record's `seq`."""
        return [violation for record in self._views() for violation in record.violations]

    def assert_conformant(self, *, allow: Collection[str] = ()) -> None:
        """Assert the client sent only valid MCP: no violation of a rule outside `allow` (rule ids, `RULES`).

        On failure the message lists each violation (rule, JSON path, what was expected) under its request.
        """
        unknown = sorted(set(allow) - set(RULES))
        if unknown:
            raise ValueError(f"allow names no referee rule: {', '.join(unknown)}; the rules are {', '.join(RULES)}")
        records = self._views()
        found = [violation for record in records for violation in record.violations if violation.rule not in allow]
        if found:
            raise AssertionError(broken(found, {record.seq: record for record in records}))


def broken(violations: Sequence[Violation], records: Mapping[int, Record]) -> str:
    """`assert_conformant`'s failure: each violation, under the request it was found in."""
    count = len(violations)
    lines = [f"the client broke MCP's rules {count} time{'s' * (count != 1)} (docs/referee.md):"]
    shown = None
    for violation in violations:
        if violation.seq != shown:
            shown = violation.seq
            record = records.get(violation.seq)
            lines.append(f"  {record.summary() if record is not None else f'#{violation.seq}'}")
        lines.append(f"    {violation.rule} at {violation.path}: {violation.message}")
    return "\n".join(lines)
