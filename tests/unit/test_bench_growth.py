"""bench/growth.py: its items, its windows and what its tables say when a store stops
short or is not installed."""

from __future__ import annotations

import asyncio
import json

from bench import growth


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
    table = growth.section([grown, stopped], (10, 100), 1.0).tables[0]
    assert table.rows == [["triple", "file", "3.0x", "3.0x"], ["triple", "file", "not reached", "not reached"]]


def test_a_peer_that_is_not_installed_is_a_row_saying_how_to_install_it(tmp_path):
    async def missing(places):
        raise ImportError("no module", name="agents")

    grown = asyncio.run(growth.grow(growth.Store("peer", "SQLite", missing), growth.Places(tmp_path, None), (10,), 60))
    assert grown.stopped == "not installed (agents): pip install -e '.[bench]'"
