"""An output file (--json, --html, -o) is replaced whole, and only the file meant."""

from __future__ import annotations

import pytest

from handoff import inputs
from handoff.app import outputs
from handoff.app.outputs import write_atomically
from handoff.errors import UserError
from handoff.scenario_files import SCENARIO_DIR


def test_a_file_that_was_there_keeps_its_permissions(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    target.chmod(0o644)
    write_atomically(target, b"new")
    assert target.read_text() == "new" and oct(target.stat().st_mode & 0o777) == "0o644"


def test_a_new_file_gets_what_the_umask_allows(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "UMASK", 0o027)  # as read when the tool started
    write_atomically(tmp_path / "new.json", b"{}")
    assert oct((tmp_path / "new.json").stat().st_mode & 0o777) == "0o640"


def test_a_link_at_the_path_is_replaced_and_what_it_named_is_untouched(tmp_path):
    """A link planted where the output goes must not redirect the write (the threat
    model in docs/stores-and-security.md)."""
    (tmp_path / "victim").write_text("keep me")
    (tmp_path / "link.html").symlink_to("victim")
    write_atomically(tmp_path / "link.html", b"new")
    assert not (tmp_path / "link.html").is_symlink() and (tmp_path / "link.html").read_text() == "new"
    assert (tmp_path / "victim").read_text() == "keep me"


def test_only_the_files_the_tool_reads_are_kept_from_an_output(tmp_path):
    """A stored run's record and the scenarios may not be overwritten; a report the user
    saved beside a run may, again and again."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "run.json").write_text("{}")
    (tmp_path / "x" / "report.html").write_text("saved before")
    kept = outputs.read_by_the_tool(tmp_path)
    inputs.writable_file(tmp_path / "x" / "report.html", "-o", keep=kept)
    with pytest.raises(UserError, match="which the tool reads"):
        inputs.writable_file(tmp_path / "x" / "run.json", "-o", keep=kept)
    with pytest.raises(UserError, match="which the tool reads"):
        inputs.writable_file(SCENARIO_DIR / "cross-process.toml", "-o", keep=kept)


def test_another_user_s_entry_in_a_sticky_directory_is_refused_before_the_work(tmp_path, monkeypatch):
    """As in /tmp: the rename at the end would fail (EPERM) after the whole run."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "planted").symlink_to("/etc/passwd")
    monkeypatch.setattr(inputs.os, "geteuid", lambda: 65534)  # nobody: neither the entry nor the directory is ours
    with pytest.raises(UserError, match="belongs to another user"):
        inputs.writable_file(shared / "planted", "--json")
    inputs.writable_file(shared / "new.json", "--json")  # a new name there is fine

