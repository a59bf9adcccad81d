"""The database rungs on a real PostgreSQL (a throwaway embedded server)."""

from __future__ import annotations

import contextlib
import os

import pytest

pytestmark = pytest.mark.e2e


def test_postgres_resume_ran_with_empty_homes_of_its_own(matrix):
    a, b = matrix.steps("cross-process-postgres").values()
    assert a.ready.home != b.ready.home
    assert a.ready.store.startswith("postgresql://") and b.record.store == "postgres"


def test_discovery_split_registry_finds_what_the_runtime_does_not(matrix):
    a, b = matrix.steps("discovery-split").values()
    actions = {e.action: e for e in b.actions}
    assert actions["list"].listed == ()
    assert actions["metadata"].found is False
    assert actions["discover"].registered == (a.reported_session_id,)
    assert b.reported_session_id == a.reported_session_id


def test_crash_during_write_leaves_no_torn_line(matrix):
    a, crashed, b = matrix.steps("crash-during-write").values()
    assert crashed.killed_on_purpose and not crashed.finished
    assert "append to /state/events.jsonl" in crashed.holding.during
    log = b.eventlog
    assert log.unreadable_lines == 0
    # the killed transaction left nothing: B loads exactly what A closed with
    assert log.resume_event_count == a.eventlog.events


def test_cross_machine_postgres_reached_the_database_over_the_lan(matrix):
    a, b = matrix.steps("cross-machine-postgres").values()
    assert (a.ready.hostname, b.ready.hostname) == ("host-a", "host-b")
    assert "127.0.0.1" not in b.ready.store


def test_a_run_on_a_named_server_keeps_its_sessions_for_sessions_list(tmp_path):
    """Following docs/stores-and-security.md: `handoff run --store URL`, then `handoff sessions list --store
    URL` shows the sessions the run made (the run says so). Only the tool's own throwaway
    server is deleted; a server the user named keeps what the run wrote."""
    import subprocess
    import sys

    from handoff.runs import store as runs
    from handoff.stores.database import redacted
    from handoff.stores.postgres_server import ThrowawayPostgres

    def handoff(*args: str) -> subprocess.CompletedProcess:
        # A line each, whatever the table's width: this test reads rows, not the layout
        return subprocess.run([sys.executable, "-m", "handoff", *args], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "COLUMNS": "1000"})

    server = ThrowawayPostgres(["127.0.0.1"])  # stands in for the user's own server
    server.start()
    # The password as a query parameter, one of the forms libpq takes (redacted() knows them all)
    url = f"postgresql://postgres@127.0.0.1:{server.port}/postgres?password={server.password}"
    try:
        ran = handoff("run", "cross-process-postgres", "--store", url, "--runs-dir", str(tmp_path))
        assert ran.returncode == 0, ran.stderr
        record = runs.load(None, tmp_path).record
        tag = record.id.rsplit("-", 1)[-1]
        # The server's password is in the URL: shown redacted, and the command says which URL to give.
        assert (f"kept on {redacted(url)} (schemas handoff_{tag}_*): `handoff sessions list --store` with the URL "
                f"you gave lists them" in ran.stderr)
        assert server.password not in ran.stdout + ran.stderr
        stored = [path for path in tmp_path.rglob("*") if path.is_file()]
        assert stored and not [path for path in stored if server.password.encode() in path.read_bytes()]
        [session_id] = {step.view().reported_session_id for step in record.scenarios[0].steps}
        listed = handoff("sessions", "list", "--store", url)
        assert listed.returncode == 0, listed.stderr
        [row] = [line for line in listed.stdout.splitlines() if session_id in line]
        assert f"run …{tag}, cross_process_postgres" in row and "alice" in row
    finally:
        server.stop()


def test_the_throwaway_server_refuses_another_local_user_without_the_run_s_password():
    """Any local user can reach its port: as uid nobody, psql does not get in over TCP
    without the password, nor with a wrong one; with the password the run hands its
    workers, it does. It has no Unix socket to try."""
    import pwd
    import subprocess

    from handoff.stores.postgres_server import ThrowawayPostgres, _binaries

    server = ThrowawayPostgres(["127.0.0.1"])
    url = server.start()
    try:
        psql = str(_binaries() / "psql")
        nobody = pwd.getpwnam("nobody").pw_uid

        def as_nobody(target: str) -> subprocess.CompletedProcess:
            return subprocess.run([psql, "-w", "-Atc", "select current_user", target], user=nobody, cwd="/",
                                  capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})

        assert not list(server.dir.glob(".s.PGSQL.*"))  # no Unix socket: TCP, with the password, is the only way in
        for target in (f"postgresql://postgres@127.0.0.1:{server.port}/postgres",
                       url.replace(server.password, "guessed")):
            refused = as_nobody(target)
            assert refused.returncode != 0 and refused.stdout == "", refused
            assert "password" in refused.stderr  # refused for the password, not for being unreachable
        assert as_nobody(url).stdout.strip() == "postgres"
    finally:
        server.stop()


def _shared_memory_of(pid: int) -> tuple[set[str], set[str]]:
    """The System V segments a postmaster made and the /dev/shm files it and its processes
    map (some map one of their own), named as the leftovers name them."""
    from pathlib import Path

    import psutil

    segments = {f"System V segment {line.split()[1]}" for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
                if line.split()[4] == str(pid)}
    files = set()
    for process in [psutil.Process(pid), *psutil.Process(pid).children()]:
        with contextlib.suppress(OSError):  # a process that has just ended maps nothing
            files |= {line.split(maxsplit=5)[5] for line in Path(f"/proc/{process.pid}/maps").read_text().splitlines()
                      if " /dev/shm/" in line}
    return segments, files


def _remaining(names: set[str]) -> set[str]:
    """Which of these segments and files still exist."""
    from pathlib import Path

    listed = Path("/proc/sysvipc/shm").read_text()
    return {name for name in names
            if (f" {name.split()[-1]} " in listed if name.startswith("System V") else Path(name).exists())}


def test_a_stopped_server_leaves_no_shared_memory():
    """A postmaster removes its shared memory only when it exits by itself: the server's
    stop is an immediate shutdown, so nothing of it stays."""
    from handoff.stores.postgres_server import ThrowawayPostgres

    server = ThrowawayPostgres(["127.0.0.1"])
    server.start()
    segments, files = _shared_memory_of(server.process.pid)
    assert len(segments) == 1 and len(files) >= 1, (segments, files)
    server.stop()
    assert _remaining(segments | files) == set()


@pytest.mark.serial  # its killed server's memory is a leftover for a moment: any run starting then would remove it
def test_a_killed_server_s_shared_memory_is_a_leftover_until_clean():
    """One killed with SIGKILL (as when its run is killed and the server dies with it)
    leaves its segment and its files behind; the leftovers list them, not while it runs,
    and removing them removes them. (Run alone: no other server of the account runs.)"""
    import signal

    import psutil

    from handoff import leftovers
    from handoff.stores.postgres_server import ThrowawayPostgres

    def shared_leftovers() -> set[str]:
        return {leftover.name for leftover in leftovers.find() if leftover.kind == "shared memory segment"}

    before = shared_leftovers()
    killed = ThrowawayPostgres(["127.0.0.1"])
    killed.start()
    try:
        segments, files = _shared_memory_of(killed.process.pid)
        assert shared_leftovers() == before  # in use: not a leftover
        group = [psutil.Process(killed.process.pid), *psutil.Process(killed.process.pid).children()]
        os.killpg(killed.process.pid, signal.SIGKILL)
        killed.process.wait()
        psutil.wait_procs(group, timeout=10)  # none of its processes attaches anything any more
        left = shared_leftovers() - before
        assert segments | files <= left and _remaining(left) == left
        assert leftovers.remove([leftover for leftover in leftovers.find() if leftover.name in left]) == []
        assert _remaining(left) == set()
    finally:
        killed.stop()


def test_the_throwaway_server_starts_however_deep_its_directory_is(monkeypatch):
    """As in a deep checkout (its data lives in the checkout's .state/postgres, which its
    service user may enter): a Unix socket there would pass the 107 bytes a socket's path
    may have, and the server would not start. It listens on TCP only."""
    import shutil

    from handoff.stores import postgres_server
    from handoff.stores.postgres_server import ThrowawayPostgres

    deep = postgres_server.POSTGRES_DIR / f"deep-{os.getpid()}-{'d' * 100}"
    monkeypatch.setattr(postgres_server, "POSTGRES_DIR", deep)
    server = ThrowawayPostgres(["127.0.0.1"])
    try:
        server.start()
        assert len(str(server.dir)) > 108
    finally:
        server.stop()
        shutil.rmtree(deep, ignore_errors=True)


def test_a_registry_on_postgresql_with_values_no_run_writes_is_listed(monkeypatch):
    """A PostgreSQL registry is input too: times of NaN and infinity (DOUBLE PRECISION
    holds them), an id and a summary longer than any, negative turns, and more rows than
    a listing shows, spread over the schemas runs keep. `sessions list` shows what it
    can and says what it left out; never a failure of the tool."""
    import subprocess
    import sys

    from handoff.stores.database import connect
    from handoff.stores.postgres_server import ThrowawayPostgres
    from handoff.stores.registry import Registry

    server = ThrowawayPostgres(["127.0.0.1"])
    server.start()
    url = f"postgresql://postgres@127.0.0.1:{server.port}/postgres?password={server.password}"
    try:
        database = connect(url)
        Registry(database)
        rows = [("nan-time", "alice", "NaN"), ("infinite-time", "alice", "Infinity"), ("x" * 100_000, "bob", "1e9")]
        for session_id, owner, created in rows:
            database.execute("INSERT INTO session_registry (session_id, owner, created_at, created_on, runtime_version, "
                             "turns, summary) VALUES ({p}, {p}, CAST({p} AS DOUBLE PRECISION), 'h', '1.0.102', -5, {p})",
                             (session_id, owner, created, "y" * 100_000))
        for schema in ("handoff_aaaaaa_one", "handoff_aaaaaa_two"):
            database.execute(f'CREATE SCHEMA "{schema}"')
            database.execute(f'SET search_path TO "{schema}"')
            Registry(database)
            database.execute("INSERT INTO session_registry (session_id, owner, created_at, created_on, runtime_version) "
                             "SELECT 's-' || n, 'carol', n, 'h', '1.0.102' FROM generate_series(1, 6000) AS n")
        database.close()
        listed = subprocess.run([sys.executable, "-m", "handoff", "sessions", "list", "--store", url], capture_output=True,
                                text=True, timeout=300, env={**os.environ, "COLUMNS": "1000"})
        assert listed.returncode == 0, listed.stderr
        said = listed.stdout
        assert "nan-time" in said and "infinite-time" in said and "(too long)" in said
        assert "xxxxxxxxxx" not in said and "yyyyyyyyyy" not in said and "Traceback" not in listed.stderr
        assert len([line for line in said.splitlines() if " s-" in line]) == 10_000 - 3
        assert "Listed: the 10,000 most recently active sessions; the registry may hold more." in said
    finally:
        server.stop()
