"""An output file (--json, --html, -o) is replaced whole, and only the file meant."""

from __future__ import annotations

import os

from handoff.app.outputs import write_atomically


def test_a_file_that_was_there_keeps_its_permissions(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    target.chmod(0o644)
    write_atomically(target, b"new")
    assert target.read_text() == "new" and oct(target.stat().st_mode & 0o777) == "0o644"


def test_a_new_file_gets_what_the_umask_allows(tmp_path):
    mask = os.umask(0o027)
    try:
        write_atomically(tmp_path / "new.json", b"{}")
    finally:
        os.umask(mask)
    assert oct((tmp_path / "new.json").stat().st_mode & 0o777) == "0o640"


def test_a_link_at_the_path_is_replaced_and_what_it_named_is_untouched(tmp_path):
    """A link planted where the output goes must not redirect the write (the threat
    model in docs/stores-and-security.md)."""
    (tmp_path / "victim").write_text("keep me")
    (tmp_path / "link.html").symlink_to("victim")
    write_atomically(tmp_path / "link.html", b"new")
    assert not (tmp_path / "link.html").is_symlink() and (tmp_path / "link.html").read_text() == "new"
    assert (tmp_path / "victim").read_text() == "keep me"
