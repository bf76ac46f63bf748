"""`check --keep-failures DIR`: each failing (bridge, property, era) written as a test file that replays its
counterexample (`keep_failure`), and the lines that say where they went."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from mcp_testkit.contract._cli._report import Verdicts

__all__ = ["add_keep_option", "keep_failures"]


def add_keep_option(check: Any) -> None:
    """Register `--keep-failures DIR` on `check`."""
    check.add_argument(
        "--keep-failures",
        metavar="DIR",
        default=None,
        help="write each failing (bridge, property, era) to DIR as a pytest file that replays its counterexample "
        "(it fails while the bridge does this, passes once it is fixed), with the failing run's journal as JSON",
    )


def keep_failures(
    args: argparse.Namespace, factories: list[tuple[str, Any]], labels: dict[str, str], verdicts: Verdicts
) -> list[str]:
    """Keep every failed or hung verdict with an example under `--keep-failures`; the lines to print (none when the
    option is not given)."""
    folder = getattr(args, "keep_failures", None)
    if folder is None:
        return []
    from mcp_testkit.adapters import DriverFactory
    from mcp_testkit.contract._keep import keep_failure

    kept, lines = [], []
    for spec, factory in factories:
        driven = isinstance(factory, DriverFactory)
        via = "socket" if driven else (args.transport or "asgi")
        for result in verdicts.get(labels[spec], {}).values():
            try:
                path = keep_failure(
                    result,
                    factory if driven else spec,
                    folder,
                    bridge=labels[spec],
                    via=via,
                    clock=getattr(args, "clock", None) if via == "asgi" else None,
                    example_timeout_s=args.example_timeout,
                )
            except (ValueError, OSError) as exc:
                lines.append(f"mcp-testkit check: could not keep {result.property_id} of {labels[spec]}: {exc}")
                continue
            if path is not None:
                kept.append(path)
    if kept:
        lines.append(f"Kept {len(kept)} failure{'s' * (len(kept) != 1)} as test files (run them with pytest):")
        lines += [f"  {path}" for path in kept]
    return lines
