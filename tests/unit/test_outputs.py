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


def test_a_link_is_written_through_and_stays_a_link(tmp_path):
    (tmp_path / "real.html").write_text("old")
    (tmp_path / "link.html").symlink_to("real.html")
    write_atomically(tmp_path / "link.html", b"new")
    assert (tmp_path / "link.html").is_symlink() and (tmp_path / "real.html").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "real.html"]
