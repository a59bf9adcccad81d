"""One contract for the database-backed session files, run on SQLite and on a real
PostgreSQL server: every operation, missing paths, concurrent appends from two
connections, rename atomicity, files of several MB."""

from __future__ import annotations

import asyncio
import errno
import threading
import time

import pytest

from handoff.stores.database import connect
from handoff.stores.files import SessionFiles

HOME = "/home/a/.copilot"


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url = request.getfixturevalue("postgres_url")
    database = connect(url)
    for table in ("session_files", "session_file_chunks"):
        database.execute(f"DROP TABLE IF EXISTS {table}")
    database.close()
    return url


def files_for(url: str, session: str = "s1", home: str = HOME) -> SessionFiles:
    database = connect(url)
    SessionFiles.create_schema(database)
    return SessionFiles(database, session, home)


def run(coroutine):
    return asyncio.run(coroutine)


def test_write_read_stat_exists(store_url):
    files = files_for(store_url)
    run(files.write_file("/state/workspace.yaml", "id: s1\n"))
    assert run(files.read_file("/state/workspace.yaml")) == "id: s1\n"
    assert run(files.exists("/state/workspace.yaml")) and run(files.exists("/state"))
    entry = run(files.stat("/state/workspace.yaml"))
    assert (entry.is_dir, entry.size) == (False, len("id: s1\n"))
    run(files.write_file("/state/workspace.yaml", "ü"))  # overwrite; size counts bytes
    assert run(files.stat("/state/workspace.yaml")).size == 2


@pytest.mark.parametrize("operation", ["read_file", "stat", "readdir", "rename"])
def test_missing_paths_are_enoent(store_url, operation):
    files = files_for(store_url)
    call = getattr(files, operation)
    with pytest.raises(FileNotFoundError) as raised:
        run(call("/state/nope", "/state/other") if operation == "rename" else call("/state/nope"))
    assert raised.value.errno == errno.ENOENT
    assert run(files.exists("/state/nope")) is False


def test_rm_missing_with_force_is_fine_without_is_enoent(store_url):
    files = files_for(store_url)
    run(files.rm("/state/nope", recursive=False, force=True))
    with pytest.raises(FileNotFoundError):
        run(files.rm("/state/nope", recursive=False, force=False))


def test_mkdir_readdir_rm(store_url):
    files = files_for(store_url)
    run(files.mkdir("/state/checkpoints", recursive=True))
    run(files.mkdir("/state/checkpoints", recursive=True))  # again: fine
    with pytest.raises(FileNotFoundError):
        run(files.mkdir("/state/a/b", recursive=False))
    run(files.write_file("/state/checkpoints/index.md", "x"))
    run(files.write_file("/state/files/%odd_name", "y"))  # LIKE wildcards in names
    assert run(files.readdir("/state")) == [("checkpoints", True), ("files", True)]
    assert run(files.readdir("/state/files")) == [("%odd_name", False)]
    with pytest.raises(OSError) as raised:
        run(files.rm("/state/checkpoints", recursive=False, force=False))
    assert raised.value.errno == errno.ENOTEMPTY
    run(files.rm("/state/checkpoints", recursive=True, force=False))
    assert run(files.readdir("/state")) == [("files", True)]


def test_append_creates_and_extends(store_url):
    files = files_for(store_url)
    run(files.append_file("/state/events.jsonl", '{"n": 1}\n'))
    run(files.append_file("/state/events.jsonl", '{"n": 2}\n'))
    assert run(files.read_file("/state/events.jsonl")) == '{"n": 1}\n{"n": 2}\n'
    assert files.read_events() == '{"n": 1}\n{"n": 2}\n'


def test_an_append_writes_only_what_it_adds_and_every_change_keeps_the_bytes(store_url):
    """The log is the row's content and then its chunks, one an append: an append adds a
    row and never rewrites what is stored. A whole write, a rename and a removal keep
    the file's bytes and size what they were on one row."""
    files = files_for(store_url)
    log = "/state/events.jsonl"
    events = [f'{{"n": {n}, "text": "ü{"x" * n}"}}\n' for n in range(40)]
    for event in events:
        run(files.append_file(log, event))
    whole = "".join(events)
    assert run(files.read_file(log)) == whole
    assert run(files.stat(log)).size == len(whole.encode())
    chunks = files.db.rows("SELECT seq, size_after FROM session_file_chunks WHERE path = {p} ORDER BY seq", ("/state/events.jsonl",))
    assert [seq for seq, _ in chunks] == list(range(1, 41))
    assert files.db.row("SELECT content FROM session_files WHERE path = {p}", ("/state/events.jsonl",)) == ("",)
    run(files.rename("/state", "/moved"))
    assert run(files.read_file("/moved/events.jsonl")) == whole and not run(files.exists(log))
    run(files.write_file("/moved/events.jsonl", "fresh\n"))
    run(files.append_file("/moved/events.jsonl", "more\n"))
    assert run(files.read_file("/moved/events.jsonl")) == "fresh\nmore\n"
    assert run(files.stat("/moved/events.jsonl")).size == len("fresh\nmore\n")
    run(files.rm("/moved", recursive=True, force=False))
    assert files.db.rows("SELECT * FROM session_file_chunks") == []


def test_an_append_to_a_directory_is_refused_and_changes_nothing(store_url):
    files = files_for(store_url)
    run(files.mkdir("/state/checkpoints", recursive=True))
    with pytest.raises(IsADirectoryError):
        run(files.append_file("/state/checkpoints", "x"))
    assert run(files.stat("/state/checkpoints")).is_dir
    assert files.db.rows("SELECT * FROM session_file_chunks") == []


def test_a_store_written_before_the_chunks_existed_is_read_and_appended_to(store_url):
    """A store made with the earlier schema (one row a file, no chunk table)."""
    database = connect(store_url)
    database.execute("CREATE TABLE session_files (session_id TEXT NOT NULL, path TEXT NOT NULL, is_dir BOOLEAN NOT NULL, "
                     "content TEXT NOT NULL DEFAULT '', mtime DOUBLE PRECISION NOT NULL, "
                     "birthtime DOUBLE PRECISION NOT NULL, PRIMARY KEY (session_id, path))")
    for path, is_dir, content in (("/state", True, ""), ("/state/events.jsonl", False, '{"n": 1}\n')):
        database.execute("INSERT INTO session_files VALUES ({p}, {p}, {p}, {p}, 1.0, 1.0)", ("s1", path, is_dir, content))
    database.close()
    files = files_for(store_url)
    assert run(files.read_file("/state/events.jsonl")) == '{"n": 1}\n'
    run(files.append_file("/state/events.jsonl", '{"n": 2}\n'))
    assert run(files.read_file("/state/events.jsonl")) == '{"n": 1}\n{"n": 2}\n'
    assert run(files.stat("/state/events.jsonl")).size == 18


def test_concurrent_appends_from_two_connections_lose_nothing(store_url):
    lines_each = 150

    def writer(name: str) -> None:
        files = files_for(store_url)
        for n in range(lines_each):
            run(files.append_file("/state/events.jsonl", f'{{"writer": "{name}", "n": {n}}}\n'))

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = run(files_for(store_url).read_file("/state/events.jsonl")).splitlines()
    assert len(lines) == 2 * lines_each
    for name in ("a", "b"):  # each writer's lines are whole and in its own order
        assert [line for line in lines if f'"{name}"' in line] == [
            f'{{"writer": "{name}", "n": {n}}}' for n in range(lines_each)
        ]


def test_rename_moves_a_tree_and_replaces_the_destination(store_url):
    files = files_for(store_url)
    run(files.write_file("/state/workspace.yaml.tmp.1", "new"))
    run(files.write_file("/state/workspace.yaml", "old"))
    run(files.rename("/state/workspace.yaml.tmp.1", "/state/workspace.yaml"))
    assert run(files.read_file("/state/workspace.yaml")) == "new"
    assert not run(files.exists("/state/workspace.yaml.tmp.1"))
    run(files.write_file("/state/d/x/deep.txt", "deep"))
    run(files.rename("/state/d", "/state/e"))
    assert run(files.read_file("/state/e/x/deep.txt")) == "deep"
    assert not run(files.exists("/state/d/x/deep.txt"))


def test_rename_is_atomic_for_a_concurrent_reader(store_url):
    """A reader never sees the file missing while another connection keeps replacing it."""
    writer = files_for(store_url)
    run(writer.write_file("/state/workspace.yaml", "v0"))
    seen, missing, failures = [], [], []
    stop = threading.Event()

    def read_constantly() -> None:
        reader = files_for(store_url)  # its own connection, made in its own thread
        try:
            while not stop.is_set():
                try:
                    seen.append(run(reader.read_file("/state/workspace.yaml")))
                except FileNotFoundError:
                    missing.append(1)
        except Exception as error:  # pragma: no cover - reported below
            failures.append(error)

    thread = threading.Thread(target=read_constantly)
    thread.start()
    # Keep replacing until the reader has really raced the writer (at least 80 renames and
    # 20 reads; a busy machine may start the reader late), within a bound.
    n, deadline = 0, time.monotonic() + 20
    while (n < 80 or len(seen) < 20) and time.monotonic() < deadline and not failures:
        n += 1
        run(writer.write_file(f"/state/workspace.yaml.tmp.{n}", f"v{n}"))
        run(writer.rename(f"/state/workspace.yaml.tmp.{n}", "/state/workspace.yaml"))
    stop.set()
    thread.join()
    assert failures == [] and missing == []
    assert len(seen) >= 20, "the reader never raced the writer"
    assert run(writer.read_file("/state/workspace.yaml")) == f"v{n}"


def test_files_of_several_megabytes(store_url):
    files = files_for(store_url)
    chunk = ("x" * 1023 + "\n") * 1024  # 1 MiB
    for _ in range(4):
        run(files.append_file("/state/events.jsonl", chunk))
    assert run(files.stat("/state/events.jsonl")).size == 4 * len(chunk)
    assert run(files.read_file("/state/events.jsonl")) == chunk * 4


def test_paths_under_a_home_resolve_on_another_host(store_url):
    """Host A writes <its home>/session-state/...; host B, with another home, reads it."""
    on_a = files_for(store_url, home="/home/a/.copilot")
    on_b = files_for(store_url, home="/srv/b/copilot-home")
    run(on_a.write_file("/home/a/.copilot/session-state/s1/workspace.yaml", "written on A"))
    assert run(on_b.read_file("/srv/b/copilot-home/session-state/s1/workspace.yaml")) == "written on A"


def test_sessions_do_not_see_each_other(store_url):
    one, two = files_for(store_url, "s1"), files_for(store_url, "s2")
    run(one.write_file("/state/events.jsonl", "one"))
    assert not run(two.exists("/state/events.jsonl"))


def test_unreachable_server_is_a_one_line_user_error():
    from handoff.errors import UserError

    with pytest.raises(UserError, match=r"cannot connect to PostgreSQL at 127\.0\.0\.1:9: "):
        connect("postgresql://postgres@127.0.0.1:9/postgres")


def test_many_connections_opening_a_new_sqlite_store_at_once_all_succeed(tmp_path):
    """Switching a new file to WAL needs it alone for a moment; SQLite says "database is
    locked" at once to the others instead of waiting, so opening retries (it used to
    fail about one time in thirty with four openers)."""
    errors: list[Exception] = []

    def open_and_close(url: str) -> None:
        try:
            connect(url).close()
        except Exception as error:  # noqa: BLE001 -- collected and asserted on below
            errors.append(error)

    for attempt in range(150):
        url = f"sqlite://{tmp_path / f'new-{attempt}.db'}"
        threads = [threading.Thread(target=open_and_close, args=(url,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
