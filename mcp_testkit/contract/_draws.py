"""Hypothesis' draws of a property, after its declared cases: its settings (derandomized by default, no database
unless one is given, every health check off) and draws that do not depend on which modules happen to be loaded."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mcp_testkit.contract._database import seeded_like_derandomize
from mcp_testkit.contract._errors import ContractViolation, one_line, traceback_text
from mcp_testkit.contract._hang import BridgeHung
from mcp_testkit.contract._property_run import Stop as _Stop
from mcp_testkit.contract._verdict import failure_status

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

    from mcp_testkit.contract._property_run import PropertyRun
    from mcp_testkit.contract._verdict import Status

__all__ = ["draw"]


@contextlib.contextmanager
def _context_free_draws() -> Iterator[None]:
    """Draws that do not depend on which modules are loaded.

    Hypothesis mixes constants found in the user's loaded modules into its draws, so a derandomized
    run drew other examples under pytest than from `python -c`. The contract's verdicts must not
    depend on what happens to be imported: while it runs, that pool of constants is empty.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the mechanism needs no fix
        yield
        return
    local = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    constants = getattr(providers, "Constants", None)
    if local is None or cache is None or constants is None:  # pragma: no cover
        yield
        return
    empty = constants()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = local
        cache.cache.clear()


def _settings(max_examples: int, derandomize: bool, database: ExampleDatabase | None) -> Any:
    """With a database, its saved examples are replayed first (Hypothesis' reuse phase), and the draws after them
    keep the derandomized seed (`seeded_like_derandomize`): Hypothesis allows no database beside derandomize."""
    from hypothesis import HealthCheck, Phase, settings

    reuse = [Phase.reuse] if database is not None else []
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=database,
        derandomize=derandomize and database is None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        phases=[*reuse, Phase.generate, Phase.target, Phase.shrink],
    )


def draw(
    run: PropertyRun,
    examples: int,
    derandomize: bool,
    notes: list[str],
    database: ExampleDatabase | None = None,
) -> tuple[Status, str] | None:
    """Hypothesis' draws after the declared cases, `examples` of them; the verdict they found, or None when the
    property held through them (`notes` say what cut them short). With `database`, the examples it holds for this
    property run first: a failure found before, here or on another machine sharing it, is the first one tried."""
    from hypothesis import given

    prop = run.prop
    strategies = prop.strategies(run.facts)

    # Derandomized draws are seeded by a digest of the test's source: `body` keeps its text, `_Stop` included.
    def body(**inputs: Any) -> None:
        if run.over_budget():
            raise _Stop("budget")
        run.example(inputs, "drawn")

    body.__name__ = body.__qualname__ = prop.name
    seeded = seeded_like_derandomize(body) if derandomize and database is not None else body
    test = _settings(examples, derandomize, database)(given(**strategies)(seeded))
    try:
        with _context_free_draws():
            test()
    except _Stop as stop:
        if stop.error is not None and run.failure is not None:
            # The adapter raised while Hypothesis shrank a failure: the bridge did fail, on the case found so far.
            first = str(stop.error).splitlines()[0] if str(stop.error) else type(stop.error).__name__
            notes.append("shrinking stopped early: the adapter raised on a smaller case")
            return (
                failure_status(prop, run.hang),
                f"{run.failure}\n(shrinking stopped: the adapter raised on a smaller case, so this is the shortest "
                f"counterexample found before: {first})",
            )
        if stop.error is not None:
            return "error", str(stop.error)
        if run.failure is None:
            notes.append(f"the budget of {run.budget:g} s ran out after {run.examples} examples")
            return None
        notes.append(f"shrinking stopped early: the budget of {run.budget:g} s ran out")
        return (
            failure_status(prop, run.hang),
            f"{run.failure}\n(shrinking stopped when the budget of {run.budget:g} s ran out: "
            "a shorter counterexample may exist)",
        )
    except ContractViolation as violation:
        return failure_status(prop, isinstance(violation, BridgeHung)), str(violation)
    except Exception as error:
        if run.failure is not None:
            # Hypothesis could not replay the failure (a bridge that is not deterministic): it still failed.
            notes.append(f"the failure did not reproduce on replay ({type(error).__name__})")
            return failure_status(prop, run.hang), run.failure
        return "error", f"the contract harness raised {one_line(error)}\n{traceback_text(error)}"
    return None
