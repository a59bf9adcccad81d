"""The suite as a team's own tests use it: ``validate`` for the report, and
``assert_conforms`` for one assertion in one test.

    from handoff.conform.testing import assert_conforms

    def test_our_provider_keeps_the_contract():
        assert_conforms(make_provider, spec="myapp.sessions:make_provider")
"""

from __future__ import annotations

from typing import Any, Callable

from handoff.conform.suite import Outcome, Report, validate

__all__ = ["Report", "assert_conforms", "validate"]


def assert_conforms(factory: Callable[[Any], Any], spec: str | None = None, runtime: bool = True) -> Report:
    """``validate`` as one assertion: the report when every required row holds, else
    AssertionError naming each row that does not and why. ``spec`` is the factory's
    MODULE:FACTORY, for the new-process rows (without it they are unknown)."""
    report = validate(factory, spec=spec, runtime=runtime)
    failing = [row for row in report.rows if row.required and row.outcome != Outcome.OK]
    if failing:
        raise AssertionError(f"{report.provider} does not keep the contract: "
                             + "; ".join(f"{row.name}: {row.outcome} ({row.reason})" for row in failing))
    return report
