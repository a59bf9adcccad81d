"""The store-cost rungs (scenarios/long-history-{sqlite,postgres}-store-cost.toml, tagged
slow): a 100-turn session through each database store, its cost per filler turn counted
by the database and judged flat, then resumed from the database in a new process."""

from __future__ import annotations

import pytest

from handoff import scenario_files
from handoff.words import Action, Verdict
from tests.e2e.conftest import OTHER_FACT, run_scenarios

pytestmark = pytest.mark.e2e
NAMES = ["long-history-sqlite-store-cost", "long-history-postgres-store-cost"]


@pytest.fixture(scope="module")
def outcome():
    return run_scenarios(scenario_files.select(NAMES), OTHER_FACT, jobs=2)


@pytest.mark.parametrize("name", NAMES)
def test_each_filler_turn_s_cost_was_counted_by_the_database_and_stayed_flat(outcome, name):
    (told, asked) = outcome.turns(name)
    assert told.as_expected and told.step.store_cost.flat
    assert ("store cost per turn", "flat", "flat") in [(e.name, e.wanted, e.got) for e in told.expectations]
    (fill,) = [a for a in outcome.steps(name)["A"].actions if a.action == Action.FILL]
    assert len(fill.store_given) == len(fill.store_written) == 99
    # every filler turn gave the store its events (a remember prompt, its answer, ...),
    # and the database paid something over the turns: the counts are real, not zero
    assert all(given > 500 for given in fill.store_given) and sum(fill.store_written) > sum(fill.store_given) / 2
    assert asked.verdict == Verdict.KEPT and asked.as_expected
