"""Parsing --host NAME=ssh://user@machine[:port][/home][?project=DIR]."""

import pytest

from handoff.errors import UserError
from handoff.hosts.ssh import SshTarget


def test_full_url():
    target = SshTarget.parse("b", "ssh://ana@box.example:2222/srv/copilot-home?project=/opt/handoff")
    assert target == SshTarget("ana", "box.example", 2222, "/srv/copilot-home", "/opt/handoff")


def test_defaults():
    target = SshTarget.parse("b", "ssh://box.example")
    assert (target.user, target.port, target.home, target.project) == ("root", 22, "~/.copilot-handoff/home", "~/copilot-handoff")


@pytest.mark.parametrize("url", ["http://box", "box.example", "ssh://", "ssh://box:port"])
def test_bad_urls_are_user_errors(url):
    with pytest.raises(UserError, match="--host b="):
        SshTarget.parse("b", url)
