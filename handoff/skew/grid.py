"""`handoff skew`: does a session survive a change of runtime or SDK version, both ways?

For every installed runtime/SDK pair (a :class:`Pair`) and every other pair, one *cell*:
a process on the first pair creates a session, tells the fact and closes it; a new
process on the second resumes it from the same home and asks. Each cell is an ordinary
scenario — the steps of ``scenarios/skew/cell.toml`` with both pairs' versions filled in
and the verdict ``scenarios/skew/expected.toml`` expects — so the coordinator runs it,
the run is stored, the checker judges it and `handoff diff` compares two grids, exactly
as for `handoff run`. Only the rendering differs: created-by rows × resumed-by columns
(handoff/report/skew_grid.py). Upgrades sit above the diagonal, downgrades below it.
"""

from __future__ import annotations

import dataclasses
from itertools import product
from pathlib import Path

from handoff import versions
from handoff.errors import UserError
from handoff.scenario import Scenario
from handoff.scenario_files import SCENARIO_DIR, load
from handoff.skew.expected import EXPECTED_FILE, Pair, Rule, expectation
from handoff.skew.expected import load as load_rules
from handoff.skew.expected import load_tell_rules

CELL_FILE = SCENARIO_DIR / "skew" / "cell.toml"


def chosen_versions(runtimes: list[str], sdks: list[str]) -> tuple[list[str], list[str]]:
    """The versions the grid spans: the ones named, or every installed one. A version
    that is malformed, not pinned or not installed is a UserError naming it."""
    for name in runtimes:
        if not versions.well_formed(name):
            raise UserError(f'--runtime {name}: not a version number such as "1.0.92"')
    for name in sdks:
        if not versions.well_formed_sdk(name):
            raise UserError(f'--sdk {name}: not a version number such as "1.0.24", or "node@1.0.14" for the Node.js SDK')
    try:
        for name in runtimes:
            versions.runtime(name)
        for name in sdks:
            versions.sdk(name)
    except versions.NotAvailable as missing:
        raise UserError(str(missing)) from None
    runtimes = sorted(set(runtimes) or set(versions.installed_runtimes()), key=versions.key)
    # The Node.js SDK is on the grid when named (--sdk node@1.0.14): with every Python SDK
    # it would make the default grid half as large again.
    sdks = sorted(set(sdks) or set(versions.installed_sdks()), key=versions.sdk_key)
    if len(runtimes) * len(sdks) < 2:
        raise UserError(f"the grid needs at least two runtime/SDK pairs, and only runtime {', '.join(runtimes)} with "
                        f"SDK {', '.join(sdks)} is chosen or installed: run `{versions.INSTALL_COMMAND}`")
    return runtimes, sdks


def pairs(runtimes: list[str], sdks: list[str]) -> list[Pair]:
    """Every runtime with every SDK, oldest runtime first."""
    return [Pair(runtime, sdk) for runtime, sdk in product(runtimes, sdks)]


def cell_name(created: Pair, resumed: Pair) -> str:
    """``1.0.92+1.0.25-to-1.0.102+1.0.24`` (runtime+SDK): a scenario name is also a folder
    name, so no slash."""
    return f"{created.runtime}+{created.sdk}-to-{resumed.runtime}+{resumed.sdk}"


def plan(chosen: list[Pair], cell_file: Path = CELL_FILE, expected_file: Path = EXPECTED_FILE) -> list[Scenario]:
    """One scenario per (created-by, resumed-by) pair of ``chosen``, the diagonal included
    (the same pair on both sides: the control every other cell is read against)."""
    template = load(cell_file)
    if len(template.steps) != 2 or not template.steps[1].asks:
        raise UserError(f"{cell_file}: a skew cell has two steps, the second one asking")
    rules, tell_rules = load_rules(expected_file), load_tell_rules(expected_file)
    return [_cell(template, created, resumed, expectation(rules, created, resumed),
                  next((rule for rule in tell_rules if rule.matches(created, resumed)), None))
            for created, resumed in product(chosen, chosen)]


def _cell(template: Scenario, created: Pair, resumed: Pair, rule: Rule, tell_rule: Rule | None = None) -> Scenario:
    first, second = template.steps
    steps = (dataclasses.replace(first, runtime=created.runtime, sdk=created.sdk,
                                 expect_tell=tell_rule.expect if tell_rule else first.expect_tell),
             dataclasses.replace(second, runtime=resumed.runtime, sdk=resumed.sdk, expect=rule.expect))
    return dataclasses.replace(template, name=cell_name(created, resumed), steps=steps,
                               title=f"created by runtime {created.runtime} / SDK {created.sdk}, resumed by runtime "
                                     f"{resumed.runtime} / SDK {resumed.sdk}",
                               proves=f"{template.proves} Expected {rule.expect}: {rule.because}.")


def pairs_of(scenario: Scenario) -> tuple[Pair, Pair]:
    """The (created-by, resumed-by) pairs of a cell, as the stored scenario names them."""
    first, second = scenario.steps[0], scenario.steps[-1]
    return (Pair(first.runtime or versions.DEFAULT_RUNTIME, first.sdk or versions.DEFAULT_SDK),
            Pair(second.runtime or versions.DEFAULT_RUNTIME, second.sdk or versions.DEFAULT_SDK))
