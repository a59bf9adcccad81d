"""The database store inside one process when its PostgreSQL server restarts or goes away:
a real server (ThrowawayPostgres) is restarted or stopped under a live store, nothing of the
database is faked. After a restart every operation works again on a new connection and
nothing is stored twice; while the server stays down every operation says the store is
unreachable (never that a file or a session is missing), within a bounded back-off; and
what the SDK's own SessionFs adapter hands the runtime then is an outage, not 'no such file'."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from copilot.session_fs_provider import create_session_fs_adapter

from handoff.stores.database import StoreUnreachable, connect
from handoff.stores.files import EVENTS, SessionFiles, UnsureChange
from handoff.stores.postgres_server import ThrowawayPostgres
from handoff.worker import store as worker_store
from handoff.worker.sdk import StoreProvider
from handoff.worker.store import RECONNECT_WAITS, DatabaseStore, open_database

HOME = "/home/a/.copilot"


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture(scope="module")
def server():
    postgres = ThrowawayPostgres(["127.0.0.1"])
    try:
        postgres.start()
        yield postgres
    finally:
        postgres.stop()  # also when a test left it stopped


def restart(server: ThrowawayPostgres) -> None:
    server.shut_down()
    server.launch()
    server.wait_ready()


@pytest.fixture
def quick(monkeypatch):
    """One short wait between attempts, for tests about what happens, not how long it takes."""
    monkeypatch.setattr(worker_store, "RECONNECT_WAITS", (0.01,))


@pytest.fixture
def stopped(server):
    """The server shut down for the test, and started again after it whatever happened."""
    server.shut_down()
    try:
        yield server
    finally:
        server.launch()
        server.wait_ready()


@pytest.fixture
def store(server, tmp_path, request):
    """A worker's store with one session, in a schema of its own (on the URL, as a run's)."""
    schema = "t_" + re.sub(r"\W", "_", request.node.name)[-50:].lower()
    admin = connect(server.url_for("127.0.0.1"))
    admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    admin.execute(f'CREATE SCHEMA "{schema}"')
    admin.close()
    opened = DatabaseStore(f"{server.url_for('127.0.0.1')}?options=-c%20search_path%3D{schema}", Path(HOME))
    try:
        yield opened
    finally:
        opened.close()


def test_after_a_restart_every_operation_works_again_on_one_new_connection(server, store):
    files = store.files("s1")
    run(files.write_file("/state/workspace.yaml", "id: s1\n"))
    run(files.append_file(EVENTS, "one\n"))
    restart(server)
    assert run(files.exists(EVENTS)) is True  # the first call after the restart: no error reaches the caller
    assert store.database.reconnects == 1
    assert run(files.read_file("/state/workspace.yaml")) == "id: s1\n"
    assert run(files.stat(EVENTS)).size == 4
    assert run(files.readdir("/state")) == [("events.jsonl", False), ("workspace.yaml", False)]
    run(files.mkdir("/state/checkpoints", recursive=True))
    run(files.rename("/state/workspace.yaml", "/state/workspace.old"))
    run(files.rm("/state/workspace.old", recursive=False, force=False))
    assert store.database.reconnects == 1  # opened again once, not once per call


def test_an_append_after_a_restart_is_stored_once(server, store):
    files = store.files("s1")
    run(files.append_file(EVENTS, "one\n"))
    restart(server)
    run(files.append_file(EVENTS, "two\n"))
    assert store.events_log("s1") == b"one\ntwo\n"


def test_the_registry_counts_a_turn_after_a_restart_once(server, store):
    store.registry.created("s1", "alice", "host-a", "1.0.102", "1.0.25")
    restart(server)
    store.registry.turned("s1", "Remember this")  # turns = turns + 1: not a statement to run twice
    [registered] = store.registry.sessions()
    assert registered.turns == 1 and store.database.reconnects == 1


def test_a_new_connection_keeps_the_search_path_a_set_statement_gave_the_old_one(server):
    database = open_database(server.url_for("127.0.0.1"))
    database.execute("CREATE SCHEMA IF NOT EXISTS t_elsewhere")
    database.execute("SET search_path TO t_elsewhere")
    restart(server)
    assert database.row("SELECT current_schema()") == ("t_elsewhere",)
    assert database.reconnects == 1
    database.close()


class Cutter:
    """Ends the store's connection *while* a statement of it runs: another connection holds
    the table locked, and once the store's statement waits for that lock (as the server
    says), its server process is terminated and the lock let go."""

    def __init__(self, server: ThrowawayPostgres, store: DatabaseStore):
        self.admin = connect(server.url_for("127.0.0.1"))
        self.victim = store.database.connection.info.backend_pid
        self.schema = store.database.row("SELECT current_schema()")[0]

    def __enter__(self) -> "Cutter":
        self.admin.execute("BEGIN")
        self.admin.execute(f'LOCK TABLE "{self.schema}".session_files IN ACCESS EXCLUSIVE MODE')
        self.thread = threading.Thread(target=self._cut)
        self.thread.start()
        return self

    def _cut(self) -> None:
        while self.admin.row("SELECT wait_event_type FROM pg_stat_activity WHERE pid = {p}",
                             (self.victim,)) != ("Lock",):
            time.sleep(0.01)  # until the statement is in flight, not for a time
        self.admin.execute("SELECT pg_terminate_backend({p})", (self.victim,))
        self.admin.execute("COMMIT")

    def __exit__(self, *exc) -> None:
        self.thread.join(timeout=30)
        self.admin.close()


def test_a_read_whose_connection_is_lost_while_it_runs_is_made_again(server, store):
    files = store.files("s1")
    run(files.append_file(EVENTS, "one\n"))
    with Cutter(server, store):
        assert run(files.read_file(EVENTS)) == "one\n"
    assert store.database.reconnects == 1


def test_an_append_whose_connection_is_lost_before_its_commit_is_made_again_once(server, store):
    files = store.files("s1")
    run(files.append_file(EVENTS, "one\n"))
    with Cutter(server, store):
        run(files.append_file(EVENTS, "two\n"))  # its transaction died with its connection: nothing stored
    assert store.events_log("s1") == b"one\ntwo\n" and store.database.reconnects == 1


def test_an_append_whose_commit_a_restart_cut_off_is_checked_and_stored_once(server, store):
    """The server restarts while the append's transaction waits to commit: the commit fails
    on the dead connection, a read on a new one shows nothing was stored, and the append
    is made again, once."""
    files = store.files("s1")
    run(files.append_file(EVENTS, "one\n"))
    cut_off = []

    async def restart_before_the_commit(path: str) -> None:
        files.hold_before_commit = None
        cut_off.append(path)
        restart(server)

    files.hold_before_commit = restart_before_the_commit
    run(files.append_file(EVENTS, "two\n"))  # the app is not told anything went wrong
    assert cut_off == [EVENTS]
    assert store.events_log("s1") == b"one\ntwo\n"


def test_an_append_whose_commit_stays_unknown_is_not_stored_twice_when_the_runtime_retries_it(server, store, quick):
    """The store goes away while an append commits and stays away: the append fails as
    unsure. The runtime retries the batch (alone, or with the events that came since) once
    the store is back; it is checked against the store first."""
    files = store.files("s1")
    run(files.append_file(EVENTS, "one\n"))

    async def stop_before_the_commit(path: str) -> None:
        files.hold_before_commit = None
        server.shut_down()

    files.hold_before_commit = stop_before_the_commit
    try:
        with pytest.raises(UnsureChange, match="whether the change being committed was stored is not known"):
            run(files.append_file(EVENTS, "two\n"))
    finally:
        server.launch()
        server.wait_ready()
    run(files.append_file(EVENTS, "two\nthree\n"))  # (a shut-down server had not committed it)
    assert store.events_log("s1") == b"one\ntwo\nthree\n"


def test_an_unsure_append_that_was_stored_after_all_is_not_stored_again(store):
    """The other outcome of an unknown commit (it took), which no real server can be made to
    produce on cue: the append is in the store, and so is the note that its commit was not
    known. The runtime's retry of the batch adds only what came since."""
    files = store.files("s1")
    run(files.append_file(EVENTS, "one\n"))
    run(files.append_file(EVENTS, "two\n"))
    files._unsure[EVENTS] = (len(b"one\ntwo\n"), "two\n")
    run(files.append_file(EVENTS, "two\nthree\n"))
    assert store.events_log("s1") == b"one\ntwo\nthree\n"
    files._unsure[EVENTS] = (len(b"one\ntwo\nthree\n"), "three\n")
    run(files.append_file(EVENTS, "three\n"))  # retried alone: nothing left to add
    assert store.events_log("s1") == b"one\ntwo\nthree\n" and files._unsure == {}


def test_a_store_that_stays_down_is_an_outage_within_a_bounded_back_off_and_never_shows_the_password(
        server, store, stopped):
    files = store.files("s1")
    with pytest.raises(StoreUnreachable) as first:
        run(files.read_file(EVENTS))
    said = str(first.value)
    assert said.startswith(f"the session store at 127.0.0.1:{server.port} is unreachable: ")
    assert server.password not in said and not isinstance(first.value, FileNotFoundError)
    tried = re.search(r"\((\d+) attempts? in [\d.]+ s\)$", said)
    assert tried and 1 <= int(tried.group(1)) <= len(RECONNECT_WAITS) + 1, said
    # Known to be down: the next calls try once more, without waiting again.
    for call in (files.read_file(EVENTS), files.append_file(EVENTS, "x\n"), files.stat(EVENTS)):
        with pytest.raises(StoreUnreachable, match=r"\(it was already; tried once more\)$"):
            run(call)
    with pytest.raises(StoreUnreachable):
        store.events_log("s1")


def test_back_after_an_outage_the_same_store_goes_on(server, store, quick):
    files = store.files("s1")
    run(files.append_file(EVENTS, "one\n"))
    server.shut_down()
    try:
        with pytest.raises(StoreUnreachable) as refused:
            run(files.append_file(EVENTS, "two\n"))
        assert not isinstance(refused.value, UnsureChange)  # refused before anything was sent: nothing unsure
    finally:
        server.launch()
        server.wait_ready()
    run(files.append_file(EVENTS, "two\n"))
    assert store.events_log("s1") == b"one\ntwo\n"


def _adapter(files: SessionFiles):
    """What the SDK puts between the runtime and the provider (client.py wraps every
    provider in it)."""
    return create_session_fs_adapter(StoreProvider(files))


def test_the_sdk_adapter_turns_any_failure_of_exists_into_no():
    """Why the provider's exists says yes when the store cannot answer: the SDK answers
    'does not exist' for any exception a provider raises there, and the runtime then
    reports an outage during a resume as 'Session not found'."""
    class Failing:
        async def exists(self, path):
            raise StoreUnreachable("the session store at 127.0.0.1:1 is unreachable: refused")

    answered = run(create_session_fs_adapter(Failing()).exists(SimpleNamespace(path=EVENTS)))
    assert answered.to_dict() == {"exists": False}


def test_during_an_outage_the_runtime_is_handed_an_outage_not_a_missing_file(server, store, quick, stopped):
    adapter = _adapter(store.files("s1"))
    assert run(adapter.exists(SimpleNamespace(path=EVENTS))).exists is True  # cannot say: not "no"
    read = run(adapter.read_file(SimpleNamespace(path=EVENTS))).to_dict()
    assert read["error"]["code"] == "UNKNOWN"  # ENOENT would say the log is not there
    assert read["error"]["message"].startswith(f"the session store at 127.0.0.1:{server.port} is unreachable")
    appended = run(adapter.append_file(SimpleNamespace(path=EVENTS, content="x\n", mode=None)))
    assert appended.to_dict()["code"] == "UNKNOWN" and "is unreachable" in appended.message
    assert server.password not in read["error"]["message"] + appended.message


def test_a_missing_file_is_still_missing_and_sql_errors_are_not_taken_for_a_lost_connection(store):
    files = store.files("s1")
    assert run(files.exists("/state/nothing")) is False
    with pytest.raises(FileNotFoundError):
        run(files.read_file("/state/nothing"))
    with pytest.raises(Exception) as refused:
        store.database.execute("SELECT no_such_column FROM session_files")
    assert not store.database.lost(refused.value) and store.database.reconnects == 0


def test_sqlite_never_reconnects_and_works_as_before(tmp_path):
    store = DatabaseStore(f"sqlite:///{tmp_path / 'store.db'}", Path(HOME))
    files = store.files("s1")
    run(files.append_file(EVENTS, "one\n"))
    run(files.append_file(EVENTS, "two\n"))
    assert store.events_log("s1") == b"one\ntwo\n" and not store.database.lost(RuntimeError("x"))
    store.close()


def test_the_store_restart_fault_restarts_the_server_before_it_returns_and_leaves_nothing_to_heal(server, tmp_path):
    from handoff.fact import Fact
    from handoff.faults.base import FaultDidNotApply, FaultTarget
    from handoff.faults.catalogue import build
    from handoff.scenario import FaultPlan

    fault = build(FaultPlan("store-restart", "hold"))
    before = connect(server.url_for("127.0.0.1"))
    target = FaultTarget(tracker=None, home=tmp_path, session_id="s1", fact=Fact(), database=server)
    said = run(fault.inject(target))
    assert said == "PostgreSQL shut down (fast); PostgreSQL started again on the same data and port"
    with pytest.raises(Exception):
        before.connection.execute("SELECT 1")  # the connection made before is gone ...
    after = connect(server.url_for("127.0.0.1"))  # ... and the server takes new ones at once
    assert after.row("SELECT 1") == (1,)
    after.close()
    assert run(fault.heal(target)) is None  # nothing left open
    with pytest.raises(FaultDidNotApply, match="no throwaway PostgreSQL"):
        run(fault.inject(FaultTarget(tracker=None, home=tmp_path, session_id="s1", fact=Fact())))
