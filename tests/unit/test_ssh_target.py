"""Parsing --host NAME=ssh://user@machine[:port][/home][?project=DIR]."""

import re
import shlex

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


@pytest.mark.parametrize("project", ["/srv/my app;touch /tmp/PWNED", "/opt/it's here", "/opt/$(reboot)"])
def test_the_project_reaches_the_remote_shell_as_one_word_whatever_it_holds(project):
    """The remote command is a shell line: a path with a space, a quote or a `;` in it
    must stay the one directory `cd` is given, never become a second command."""
    from urllib.parse import quote

    from handoff.hosts.base import Launch
    from handoff.hosts.ssh import SshHost

    target = SshTarget.parse("b", f"ssh://ana@box.example/h?project={quote(project)}")
    assert target.project == project
    words = shlex.split(SshHost("b", target, "127.0.0.1", 1).worker_command(Launch()))
    assert words[:3] == ["cd", project, "&&"]


@pytest.mark.parametrize(("project", "word"), [("~/my%20app", "~/'my app'"), ("~", "~"), ("~bob/x", "~bob/x"),
                                              ("~bob", "~bob"), ("/opt/~x", "'/opt/~x'")])
def test_a_project_in_a_home_keeps_its_tilde_outside_the_quotes(project, word):
    assert SshTarget.parse("b", f"ssh://box?project={project}").project_word() == word


@pytest.mark.parametrize(("url", "says"), [
    ("ssh://-oProxyCommand=touch%20x@box", "is not a user name"),
    ("ssh://ana@-oProxyCommand=x", "begins with '-'"),
    ("ssh://ana@box?bogus=1", "only one ?project=DIR"),
    ("ssh://ana@box?project=/a&project=/b", "only one ?project=DIR"),
    ("ssh://ana@box?project=", "?project= is empty"),
])
def test_what_ssh_would_read_as_an_option_or_would_ignore_is_refused(url, says):
    with pytest.raises(UserError, match=re.escape(says)):
        SshTarget.parse("b", url)
