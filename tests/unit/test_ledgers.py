"""The ledger decides what `handoff clean` may remove: only what a run of this user wrote
down before making it, once that run is gone. Names that look like the tool's prove
nothing, and another user's things are never touched."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from handoff import leftovers, owners
from tests.owners_gone import Owner

NOBODY = 65534


def _found(name: str) -> list[leftovers.Leftover]:
    return [left for left in leftovers.find() if left.name == name or left.name.startswith(f"{name} ")]


def _alone(name: str) -> list[leftovers.LeftAlone]:
    return [thing for thing in leftovers.left_alone() if thing.name == name or thing.name.startswith(f"{name} ")]


def test_a_directory_is_in_the_ledger_before_it_exists_and_only_this_user_may_enter_it(tmp_path):
    made = owners.make_directory("handoff-run-test-", tmp_path)
    mine = [ledger for ledger in owners.ledgers() if ledger.owner == owners.started(os.getpid())]
    assert [str(made)] == [name for ledger in mine for name in ledger.named(owners.DIRECTORY) if name.startswith(str(tmp_path))]
    assert made.stat().st_mode & 0o777 == 0o700
    assert leftovers.find(of=os.getpid())  # this process's, while it lives: found only when asked for by owner
    assert not _found(str(made))
    made.rmdir()


def test_a_gone_owner_s_directory_is_removed_and_then_its_ledger_is_forgotten(tmp_path):
    path = tmp_path / f"handoff-run-{secrets.token_hex(4)}"
    with Owner((owners.DIRECTORY, str(path))) as owner:
        path.mkdir()
        (path / "inside").write_text("x")
        owner.end()
        found = _found(str(path))
        assert [(left.kind, left.owner) for left in found] == [("directory", owner.pid)]
        assert leftovers.remove(found) == []
        assert not path.exists()
        leftovers.find()  # a look forgets nothing
        assert [ledger for ledger in owners.ledgers() if ledger.owner.pid == owner.pid]
        leftovers.find(forget_emptied=True)
        assert not [ledger for ledger in owners.ledgers() if ledger.owner.pid == owner.pid]


def test_a_name_struck_off_is_not_the_owner_s(tmp_path):
    path = tmp_path / "taken"
    path.mkdir()
    code = ("import sys\nfrom handoff import owners\nowners.note(owners.DIRECTORY, sys.argv[1])\n"
            "owners.strike(owners.DIRECTORY, sys.argv[1])")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, cwd=Path(__file__).parents[2])
    assert not _found(str(path))


def test_look_alike_directories_are_left_alone_and_said_so():
    """Named as a run's directory: one of another user's, one of this user's that no
    ledger names. Neither is removed, at any owner the name seems to carry."""
    base, gone = Path(tempfile.gettempdir()), Owner()
    gone.end()
    theirs = base / f"handoff-run-3ffff0-{secrets.token_hex(3)}-notmine"
    mine = base / f"handoff-run-{owners.tag(gone.pid)}-{secrets.token_hex(3)}-mine"
    try:
        theirs.mkdir()
        os.chown(theirs, NOBODY, NOBODY)
        mine.mkdir()
        assert not _found(str(theirs)) and not _found(str(mine))
        assert [thing.why for thing in _alone(str(theirs))] == [f"it belongs to another user (uid {NOBODY})"]
        assert [thing.why for thing in _alone(str(mine))] == [leftovers.NOT_NOTED]
        # (a real clean, which tests running beside this one must not meet, is tests/e2e/test_cleanup.py's)
        dry = subprocess.run([sys.executable, "-m", "handoff", "clean", "--dry-run"], capture_output=True, text=True,
                             timeout=120)
        assert f"leaving alone directory {theirs}: it belongs to another user" in dry.stdout
        assert f"leaving alone directory {mine}: no run of this tool" in dry.stdout
    finally:
        for path in (theirs, mine):
            if path.is_dir():
                path.rmdir()


def test_another_user_s_directory_is_left_alone_even_where_a_gone_ledger_names_it(tmp_path):
    path = tmp_path / "handoff-run-shared"
    with Owner((owners.DIRECTORY, str(path))) as owner:
        path.mkdir()
        os.chown(path, NOBODY, NOBODY)
        owner.end()
        assert not _found(str(path))


def test_a_ledger_whose_pid_lives_on_in_another_process_is_gone(tmp_path):
    """A pid is used again: the owner is known by when it started too."""
    me = owners.started(os.getpid())
    assert me is not None
    path = tmp_path / "of-an-earlier-process"
    path.mkdir()
    ledger = owners.LEDGERS / f"{me.pid}-{me.ticks - 1}-{secrets.token_hex(4)}{owners.LEDGER_SUFFIX}"
    ledger.write_text(json.dumps({"pid": me.pid, "ticks": me.ticks - 1, "boot": me.boot}) + "\n"
                      + json.dumps({"kind": owners.DIRECTORY, "name": str(path)}) + "\n")
    try:
        assert [left.kind for left in _found(str(path))] == ["directory"]
    finally:
        ledger.unlink(missing_ok=True)


@pytest.mark.parametrize("bad", ["nothing (a gone owner's ledger)", "a link", "another user's", "no owner",
                                 "an owner no pid can be", "too large"])
def test_a_file_that_is_no_ledger_of_this_user_names_nothing(tmp_path, bad):
    path = tmp_path / "named"
    path.mkdir()
    header = {"pid": 4194304 if bad == "an owner no pid can be" else 1, "ticks": 0, "boot": "another boot"}
    lines = [json.dumps(header) if bad != "no owner" else "[]", json.dumps({"kind": owners.DIRECTORY, "name": str(path)})]
    text = "\n".join(lines) + "\n" + (" " * owners.LEDGER_MAX_BYTES if bad == "too large" else "")
    owners.LEDGERS.mkdir(parents=True, exist_ok=True)
    ledger = owners.LEDGERS / f"test-{secrets.token_hex(4)}{owners.LEDGER_SUFFIX}"
    real = tmp_path / "real.ledger"
    try:
        if bad == "a link":
            real.write_text(text)
            ledger.symlink_to(real)
        else:
            ledger.write_text(text)
            if bad == "another user's":
                os.chown(ledger, NOBODY, NOBODY)
        assert bool(_found(str(path))) == bad.startswith("nothing")
    finally:
        ledger.unlink(missing_ok=True)


def _exec_done(process: subprocess.Popen) -> None:
    """Until it has run its program: before that, /proc shows its parent's environment."""
    deadline = time.monotonic() + 10
    while psutil.Process(process.pid).cmdline()[:1] != ["sleep"]:
        assert time.monotonic() < deadline, "it did not start"
        time.sleep(0.01)


def test_a_marked_process_of_another_user_or_of_no_ledger_is_left_alone():
    owner = Owner()
    environment = {**os.environ, owners.OWNER_VARIABLE: str(owner.pid)}
    theirs = subprocess.Popen(["sleep", "60"], env=environment, user=NOBODY)
    unledgered = subprocess.Popen(["sleep", "60"], env={**os.environ, owners.OWNER_VARIABLE: "99999"})
    far = subprocess.Popen(["sleep", "60"], env={**os.environ, owners.OWNER_VARIABLE: str(10**12)})
    try:
        owner.end()
        for process in (theirs, unledgered, far):
            _exec_done(process)
        for process in (theirs, unledgered, far):
            assert not _found(str(process.pid))
        assert [thing.why for thing in _alone(str(theirs.pid))] == [f"it belongs to another user (uid {NOBODY})"]
        assert [thing.why for thing in _alone(str(unledgered.pid))] == [leftovers.NOT_NOTED]
    finally:
        for process in (theirs, unledgered, far):
            process.kill()
            process.wait()


def test_a_marked_process_started_before_its_owner_is_not_its():
    """A process carries a pid its owner got only later: the mark names some earlier
    process of that pid, not this run."""
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has now
    early = subprocess.Popen(["sleep", "60"], env={**os.environ, owners.OWNER_VARIABLE: str(gone.pid)})
    try:
        _exec_done(early)
        start = owners.started(early.pid)
        assert start is not None
        ledger = owners.Ledger(Path("x"), owners.Start(gone.pid, start.ticks + 1, start.boot), ())
        assert leftovers._starter(psutil.Process(early.pid), [ledger]) is None
        earlier = owners.Ledger(Path("y"), owners.Start(gone.pid, start.ticks, start.boot), ())
        assert leftovers._starter(psutil.Process(early.pid), [ledger, earlier]) == earlier
    finally:
        early.kill()
        early.wait()


def test_a_mark_naming_its_owner_s_start_names_that_owner_only():
    """A pid used again, by a run of another checkout say: the mark's start tells them apart."""
    marked = subprocess.Popen(["sleep", "60"], env={**os.environ, owners.OWNER_VARIABLE: "4242",
                                                    owners.OWNER_START_VARIABLE: "1000"})
    try:
        _exec_done(marked)
        boot = owners.started(marked.pid).boot
        that = owners.Ledger(Path("a"), owners.Start(4242, 1000, boot), ())
        other = owners.Ledger(Path("b"), owners.Start(4242, 1001, boot), ())  # the same pid, started later
        assert leftovers._starter(psutil.Process(marked.pid), [that, other]) == that
        assert leftovers._starter(psutil.Process(marked.pid), [other]) is None
    finally:
        marked.kill()
        marked.wait()


def test_a_mark_without_a_start_is_the_live_owner_s_when_that_one_started_first():
    marked = subprocess.Popen(["sleep", "60"], env={**os.environ, owners.OWNER_VARIABLE: str(os.getpid())})
    try:
        _exec_done(marked)
        me = owners.started(os.getpid())
        gone = owners.Ledger(Path("a"), owners.Start(me.pid, me.ticks - 1, me.boot), ())  # an earlier process of my pid
        assert leftovers._starter(psutil.Process(marked.pid), [gone]) is None  # it is mine, and I am alive
    finally:
        marked.kill()
        marked.wait()


def test_a_ledger_folder_others_may_write_in_is_not_trusted(tmp_path, monkeypatch):
    folder = tmp_path / "owners"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    monkeypatch.setattr(owners, "LEDGERS", folder)
    (folder / f"1-0-x{owners.LEDGER_SUFFIX}").write_text(json.dumps({"pid": 1, "ticks": 0, "boot": "b"}) + "\n")
    assert owners.ledgers() == []
    folder.chmod(0o700)
    assert len(owners.ledgers()) == 1


def test_a_mark_that_can_be_no_pid_names_no_owner():
    assert owners.marked_owner("4242") == 4242
    for value in (None, "", "0", "-1", "4194304", "10" * 8, "١٢", "42 ", "0x10"):
        assert owners.marked_owner(value) is None


@pytest.mark.parametrize("kind", sorted(owners.KINDS))
def test_a_ledger_name_no_system_call_takes_is_passed_over(tmp_path, kind):
    """A name holding a NUL byte was never made by the tool: every kind of it is passed
    over by the look `doctor`, `clean` and `run` take, never an error in it."""
    kept = tmp_path / "kept"
    kept.mkdir()
    with Owner((kind, f"{kept}\0tail"), (owners.DIRECTORY, str(kept))) as owner:
        owner.end()
        found = [left.name for left in leftovers.find()]
        assert str(kept) in found and not [name for name in found if "\0" in name]
        assert leftovers.remove([left for left in leftovers.find() if left.name == str(kept)]) == []
