"""A fill's cost to its store: counted by the database (SQLite: the kernel's count of its
write calls), judged flat or growing from the first third of the filler turns after the
first and the last third, and shown as the step's evidence."""

from __future__ import annotations

import asyncio
import posixpath
import time

import pytest

from handoff.checker.store_cost import FLAT_WITHIN, cost_growth
from handoff.protocol import ActionDone, Turn
from handoff.report import cells
from handoff.scenario import Step
from handoff.stores.database import connect
from handoff.stores.files import TABLES, SessionFiles
from handoff.scenario_files import SCENARIO_DIR, load
from tests.unit.test_checks import FINISHED, READY, ran, rows, seen
from tests.unit.test_scenario_loader import HEADER, load_error

LINE = '{"type":"assistant.message","data":{"content":"' + "a segment's sales fell " * 100 + '"}}\n'


def fill(given, written, turns=None):
    return ActionDone(t=0.0, action="fill", session_id="x", ms=1, turns=turns or len(given),
                      store_given=tuple(given), store_written=tuple(written), store_written_is="bytes counted")


def test_a_cost_that_stays_the_same_a_byte_is_flat_and_one_that_grows_with_the_log_is_not():
    flat = cost_growth([fill([1000] * 40, [6000] * 40)])
    assert (flat.early.first_turn, flat.early.last_turn, flat.late.first_turn, flat.late.last_turn) == (2, 14, 28, 40)
    assert flat.growth == 1.0 and flat.flat
    assert flat.words() == ("store cost per turn flat (1.00x): 6.0 B paid a byte given in filler turns 2–14, "
                            "6.0 B in 28–40")
    growing = cost_growth([fill([1000] * 40, [1000 * n for n in range(1, 41)])])
    assert growing.growth == pytest.approx(sum(range(28, 41)) / sum(range(2, 15))) and growing.flat is False
    at_the_edge = cost_growth([fill([1000] * 7, [999, 100, 100, 0, 0, int(100 * FLAT_WITHIN)] + [int(100 * FLAT_WITHIN)])])
    assert at_the_edge.flat


def test_the_first_filler_turn_which_may_carry_the_session_s_system_message_is_left_out():
    """Measured: the runtime's 22 KB system message came with the first filler turn in one
    run, with the tell in another; in the first turn's window it read as a cheaper start."""
    given = [30_000] + [2_700] * 98
    written = [66_000] + [33_000] * 98
    assert cost_growth([fill(given, written)]).flat


def test_paid_in_pages_a_window_is_summed_not_taken_turn_by_turn():
    pages = [8192 if n % 3 == 0 else 0 for n in range(1, 41)]  # a page every third turn
    assert cost_growth([fill([2700] * 40, pages)]).flat


@pytest.mark.parametrize("actions", [
    [],  # no fill
    [ActionDone(t=0.0, action="fill", session_id="x", ms=1, turns=40)],  # a home: nothing counted
    [fill([1] * 3, [1] * 3)],  # too few turns for thirds after the first
    [fill([1] * 8, [1] * 7)],  # counts that do not pair up
])
def test_without_counts_of_enough_turns_nothing_is_told(actions):
    assert cost_growth(actions) is None


def test_nothing_given_early_tells_nothing_rather_than_dividing_by_it():
    told = cost_growth([fill([0] * 4 + [100] * 3, [50] * 7)])
    assert told.growth is None and told.flat is None and "nothing given" in told.words()


def _judged(fill_action, flat_expected=True):
    spec = Step("A", ("create", "tell", "fill", "close"), filler_turns=40, flat_store_cost=flat_expected)
    teller = ran("A", READY, Turn(t=0.0, turn=1, kind="tell", session_id="x", prompt="p", answer="OK", ms=1),
                 fill_action, FINISHED)
    (row,) = rows([spec], [teller], [seen("A", 1, True)])
    return row


def test_the_step_expecting_a_flat_cost_is_contradicted_when_it_grows_and_unjudged_without_counts():
    flat = _judged(fill([1000] * 40, [6000] * 40))
    assert flat.as_expected is True and "store cost per turn flat" in cells.event_log(flat)
    grows = _judged(fill([1000] * 40, [1000 * n for n in range(1, 41)]))
    assert grows.as_expected is False and "store cost per turn grows" in cells.event_log(grows)
    assert [(e.name, e.wanted, e.got) for e in grows.expectations][-1:] == [("store cost per turn", "flat", "grows")]
    uncounted = _judged(ActionDone(t=0.0, action="fill", session_id="x", ms=1, turns=40))
    assert uncounted.as_expected is None


class Rewriting(SessionFiles):
    """The store as it was: an append rewrites the whole log into its row."""

    async def _append(self, path, key, content, length):
        now = time.time()
        with self.db.transaction():
            self._ensure_directories(posixpath.dirname(key), now)
            self.db.execute(
                "INSERT INTO session_files (session_id, path, is_dir, content, mtime, birthtime) VALUES "
                "({p}, {p}, FALSE, {p}, {p}, {p}) ON CONFLICT (session_id, path) DO UPDATE SET "
                "content = session_files.content || excluded.content, mtime = excluded.mtime",
                (self.session_id, key, content, now, now))
            length[:] = [self._stored_length(key)]


def _counted(tmp_path, files_class, turns: int = 120, appends: int = 1, size: int = 3) -> ActionDone:
    """``turns`` turns of ``appends`` appends each, of ``size`` event lines, counted as the
    worker counts a fill's turns (the count after each turn)."""
    database = connect(f"sqlite:///{tmp_path / files_class.__name__}-{appends}-{size}.db")
    SessionFiles.create_schema(database)
    files = files_class(database, "s", "/home/u/.copilot")
    given, written = [], []

    async def appending():
        for _ in range(turns):
            before = (files.given, database.write_cost(TABLES))
            for _ in range(appends):
                await files.append_file("/state/events.jsonl", LINE * size)
            given.append(files.given - before[0])
            written.append(database.write_cost(TABLES) - before[1])

    asyncio.run(appending())
    assert database.write_cost_is and files.given == turns * appends * size * len(LINE.encode())
    database.close()
    return fill(given, written)


def test_sqlite_s_own_writes_show_the_chunk_store_flat_and_a_store_that_rewrites_its_log_growing(tmp_path):
    chunks = cost_growth([_counted(tmp_path, SessionFiles)])
    rewriting = cost_growth([_counted(tmp_path, Rewriting)])
    assert chunks.flat, chunks.words()
    assert rewriting.flat is False and rewriting.growth > 3, rewriting.words()


@pytest.mark.parametrize("appends, size", [(4, 1), (1, 11), (2, 5)])
def test_the_wal_s_checkpoints_do_not_make_a_flat_store_look_growing(tmp_path, appends, size):
    """SQLite checkpoints its WAL every ~1,000 pages, in one burst: without a checkpoint
    in every count, the window it fell in paid for many turns (1.5x and 1.8x "grows" for
    a store that is flat, with these turn shapes)."""
    counted = cost_growth([_counted(tmp_path, SessionFiles, turns=99, appends=appends, size=size)])
    assert counted.flat, counted.words()


FILL = '[[steps]]\nname = "A"\nactions = ["create", "tell", "fill", "close"]\nfiller_turns = 40\nflat_store_cost = true\n'


@pytest.mark.parametrize("text, says", [
    ('store = "sqlite"\n' + FILL.replace('"fill", ', "").replace("filler_turns = 40\n", ""),
     "field 'flat_store_cost' is set, but the step's actions have no \"fill\""),
    ('store = "sqlite"\n' + FILL.replace("= 40", "= 39"), "field 'flat_store_cost' needs filler_turns of at least 40"),
    (FILL, "field 'flat_store_cost' needs a database store, but the scenario's store is 'home'"),
])
def test_a_flat_cost_is_expected_only_of_a_fill_long_enough_through_a_database_store(tmp_path, text, says):
    assert says in load_error(tmp_path, HEADER + text)


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_each_database_store_has_its_slow_rung_expecting_a_flat_cost(store):
    rung = load(SCENARIO_DIR / f"long-history-{store}-store-cost.toml")
    filling, resuming = rung.steps
    assert (rung.store, rung.tags, filling.flat_store_cost, resuming.expect) == (store, ("slow",), True, "kept")
    assert filling.filler_turns >= 4 * 20 and filling.home == resuming.home == "own"  # the store carries it all
