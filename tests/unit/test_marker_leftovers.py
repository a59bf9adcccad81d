"""In-use markers of runtimes that died with a SIGKILLed run: nobody holds them open, so
`handoff clean` (and the next run) removes them; a live runtime's, held open, stays."""

from __future__ import annotations

from handoff import leftovers


def test_a_marker_nobody_holds_open_is_a_leftover_and_one_held_open_is_not(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "USER_DIRS", tmp_path)
    package = tmp_path / "a" / ".cache" / "copilot" / "pkg" / "linux-x64" / "1.0.102"
    package.mkdir(parents=True)
    for pid in (7, 8):
        (package / f"inuse.{pid}.hold").write_text("")
        (package / f"inuse.{pid}.lock").write_text("")
    with (package / "inuse.8.hold").open() as live:  # a live runtime holds its .hold open
        found = [left for left in leftovers.find() if left.kind == "marker"]
        assert [left.name for left in found] == [str(package / "inuse.7.hold")]
        assert leftovers.find(of=12345) == [] or all(left.kind != "marker" for left in leftovers.find(of=12345))
        assert leftovers.remove(found) == []
        assert sorted(p.name for p in package.iterdir()) == ["inuse.8.hold", "inuse.8.lock"]
        assert not live.closed
    assert leftovers.describe(found) == "1 marker"


def test_a_leftover_without_an_owner_is_said_to_be_unused_not_of_run_pid_0():
    assert leftovers.Leftover("namespace", "handoff-x", 4242).why == "the run that made it (pid 4242 then) is gone"
    assert leftovers.Leftover("marker", "/x/inuse.7.hold", 0).why == "no process uses it any more"


def test_a_database_file_in_dev_shm_is_a_leftover_only_while_no_process_of_its_account_runs(tmp_path, monkeypatch):
    """A starting server's file is mapped by none of its processes for some milliseconds:
    an unmapped file proves nothing while a server of the account may be starting."""
    import getpass

    shm = tmp_path / "shm"
    shm.mkdir()
    (shm / "PostgreSQL.12345").write_bytes(b"\\0")
    (tmp_path / "sysv").write_text("       key      shmid perms size cpid lpid nattch uid gid\\n")
    monkeypatch.setattr(leftovers, "SERVICE_USER", getpass.getuser())
    monkeypatch.setattr(leftovers, "SHARED_MEMORY_FILES", shm)
    monkeypatch.setattr(leftovers, "SYSV_SHARED_MEMORY", tmp_path / "sysv")
    monkeypatch.setattr(leftovers, "_runs_as", lambda uid: True)
    assert leftovers._shared_memory(None) == []
    monkeypatch.setattr(leftovers, "_runs_as", lambda uid: False)
    assert [left.name for left in leftovers._shared_memory(None)] == [str(shm / "PostgreSQL.12345")]
    assert leftovers._shared_memory(4242) == []  # only among the leftovers of owners that are gone
