"""Which store each step of a diagram draws: a restarted container keeps the home of its
host's step before, however many restarts follow one another."""

from __future__ import annotations

from handoff.report.sequence import store_keys
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step


def scenario(*steps: tuple[str, str, str, str]) -> ScenarioRecord:
    """Steps as (name, host, home, store)."""
    planned = tuple(Step(name, ("create",)) for name, *_ in steps)
    return ScenarioRecord("s", Scenario("s", "T", "P", "D", planned),
                          [StepRecord(name, host, home, store, "x") for name, host, home, store in steps], [])


def test_a_restarted_step_keeps_its_host_s_last_store_and_others_have_their_own():
    record = scenario(("A", "box", "own", "home"), ("B", "box", "restarted", "home"), ("C", "other", "shared", "home"),
                      ("D", "other", "restarted", "home"), ("E", "box", "copied", "home"), ("F", "new", "restarted", "home"),
                      ("G", "db", "own", "sqlite"), ("H", "db", "restarted", "home"))
    assert store_keys(record) == ["store:own:A", "store:own:A", "store:shared", "store:shared", "store:copied:E",
                                  "store:restarted:F", "store:sqlite", "store:sqlite"]


def test_thousands_of_restarts_on_one_host_are_one_store():
    """Each restart used to look back through the ones before it, once per restart."""
    record = scenario(("A", "box", "own", "home"), *((f"R{n}", "box", "restarted", "home") for n in range(3_000)))
    assert set(store_keys(record)) == {"store:own:A"}


def test_a_pod_s_home_is_drawn_as_its_claim_and_its_worker_as_in_the_pod():
    from dataclasses import replace

    from handoff.report.sequence import _store

    record = scenario(("A", "a", "shared", "home"), ("B", "b", "own", "home"), ("C", "c", "own", "postgres"))
    record.scenario = replace(record.scenario, hosts={"a": "pod", "b": "pod", "c": "pod"})
    shared, own, database = (_store(step, record, "k") for step in record.steps)
    assert (shared.title, own.title, database.title) == ("shared claim", "B's own claim", "PostgreSQL")
    record.scenario = replace(record.scenario, hosts={"a": "container", "b": "container", "c": "container"})
    assert _store(record.steps[0], record, "k").title == "shared volume"
