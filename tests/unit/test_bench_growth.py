"""bench/growth.py: its items, its windows and what its tables say when a store stops
short or is not installed."""

from __future__ import annotations

import asyncio
import json

from bench import growth, growth_plot, growth_resume


def test_every_event_is_a_runtime_shaped_line_of_the_same_size():
    lines = [growth.event(number) for number in (0, 9, 12_345)]
    assert {len(line.encode()) for line in lines} == {growth.ITEM_BYTES}
    assert 1_350 <= growth.ITEM_BYTES <= 1_450
    assert all(line.endswith("\n") and json.loads(line)["type"] == "assistant.message" for line in lines)


def test_windows_measure_what_each_size_s_appends_wrote_and_a_budget_stops_a_store(tmp_path):
    written = [0]

    async def opened(places):
        async def append(line):
            written[0] += len(line.encode()) * 3  # a store that writes three times what it is given

        return growth.Opened(append, lambda: written[0], growth._nothing)

    store = growth.Store("triple", "file", opened)
    places = growth.Places(tmp_path, None)
    grown = asyncio.run(growth.grow(store, places, (10, 100), budget=60))
    assert [(w.size, round(w.written_ratio, 3)) for w in grown.windows] == [(10, 3.0), (100, 3.0)]
    assert grown.stopped is None
    stopped = asyncio.run(growth.grow(store, places, (10, 100), budget=-1))
    assert stopped.windows == [] and stopped.stopped == "stopped at 1 events: over its -1 s budget"
    table = growth.section(growth.Measured([grown, stopped], None), (10, 100), 1.0).tables[0]
    assert table.rows == [["triple", "file", "3.0x", "3.0x"], ["triple", "file", "not reached", "not reached"]]


def test_a_peer_that_is_not_installed_is_a_row_saying_how_to_install_it(tmp_path):
    async def missing(places):
        raise ImportError("no module", name="agents")

    grown = asyncio.run(growth.grow(growth.Store("peer", "SQLite", missing), growth.Places(tmp_path, None), (10,), 60))
    assert grown.stopped == "not installed (agents): pip install -e '.[bench]'"


def test_a_log_is_cut_into_the_batches_the_runtime_appended_and_nothing_is_lost():
    lines = ['{"type":"session.start"}\n', '{"type":"system.message"}\n', '{"type":"user.message"}\n',
             '{"type":"assistant.message"}\n', 'not json\n', '{"type":"user.message"}\n', '{"type":"session.idle"}']
    batches = growth_resume.turn_batches("".join(lines))
    assert batches == ["".join(lines[:2]), "".join(lines[2:5]), "".join(lines[5:])]
    assert growth_resume.turn_batches("") == []


def test_the_filler_turns_for_a_size_bring_the_log_near_it():
    assert growth_resume.filler_turns(1) == 0
    for events in (100, 1_000, 10_000):
        turns = growth_resume.filler_turns(events)
        built = growth_resume.OPENING_EVENTS + turns * growth_resume.EVENTS_PER_TURN
        assert abs(built - events) <= growth_resume.EVENTS_PER_TURN


def test_resume_times_are_tabled_beside_the_file_home_and_compared_at_the_largest_size_both_reached(tmp_path):
    found = growth_resume.Resumed()
    for size, events in ((10, 12), (100, 101)):
        found.built[size] = growth_resume.Built(size, f"s{size}", tmp_path, events, 1.0)
    home, sqlite, postgres = growth_resume.STORES
    found.times = {(home, 10): [100, 120, 110], (sqlite, 10): [130], (home, 100): [200], (sqlite, 100): [300, 500]}
    table = growth_resume.table(found, (10, 100, 1000))
    assert table.rows == [["events in the log", "12", "101", "not built"],
                          [home, "110 (100–120)", "200 (200–200)", "—"],
                          [sqlite, "130 (130–130)", "400 (300–500)", "—"],
                          [postgres, "—", "—", "—"]]
    assert growth_resume.findings(found, (10, 100, 1000)) == [
        f"{sqlite}: resume and first answer at 101 events took 2.00x the file home's (400 against 200 ms)"]


def test_without_matplotlib_the_plot_is_a_problem_saying_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # as if not installed
    said = growth_plot.plot([], tmp_path / "plot.svg")
    assert said == "the plot was not drawn: matplotlib is not installed (pip install -e '.[bench]')"
    assert not (tmp_path / "plot.svg").exists()
