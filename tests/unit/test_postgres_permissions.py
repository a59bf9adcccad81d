"""The throwaway PostgreSQL runs as a service user (it refuses root). The tool opens only
its own directories to that user; a directory above them the user cannot enter is named,
with the fix, and left as it was."""

from __future__ import annotations

import os
import stat

import pytest

from handoff.stores import postgres_server
from handoff.stores.postgres_server import _let_the_service_user_in, _service_user


@pytest.mark.skipif(os.geteuid() != 0, reason="the service user is made and used only when the tool runs as root")
def test_a_closed_directory_outside_the_tool_s_own_is_named_and_not_opened(tmp_path):
    user = _service_user()
    closed = tmp_path / "private"
    (closed / "checkout").mkdir(parents=True)
    closed.chmod(0o700)
    with pytest.raises(RuntimeError) as refused:
        _let_the_service_user_in(closed / "checkout", user)
    assert f"cannot enter {closed} (mode 0700)" in str(refused.value) and f"chmod o+x {closed}" in str(refused.value)
    assert stat.S_IMODE(closed.stat().st_mode) == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="the service user is made and used only when the tool runs as root")
def test_the_tool_s_own_directories_are_opened_for_it(tmp_path, monkeypatch):
    user = _service_user()
    root = tmp_path / "project"
    own = root / ".state" / "postgres" / "pg-1"
    own.mkdir(parents=True)
    for folder in (tmp_path, root, root / ".state", root / ".state" / "postgres", own):
        folder.chmod(0o755 if folder in (tmp_path, root) else 0o700)
    for parent in tmp_path.parents:  # pytest's own base directory is closed to others
        if not parent.stat().st_mode & stat.S_IXOTH:
            monkeypatch.setattr(postgres_server, "_enterable", lambda folder, account: True)
    monkeypatch.setattr(postgres_server, "PROJECT_ROOT", root)
    _let_the_service_user_in(own, user)
    assert all(stat.S_IMODE(f.stat().st_mode) & stat.S_IXOTH for f in (own, own.parent, root / ".state"))
