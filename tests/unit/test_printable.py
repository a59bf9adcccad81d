"""Text from scenario files and stored runs is shown, never obeyed: control characters
come out escaped on every command's output, and names cannot make paths that leave their
directory."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from handoff.cli import app
from handoff.confined import Escape, inside
from handoff.printable import visible


def test_control_characters_are_shown_escaped_and_layout_stays():
    assert visible("a\x1b]0;title\x07b\x1b[2Jc") == "a\\x1b]0;title\\x07b\\x1b[2Jc"
    assert visible("line\n\tindented") == "line\n\tindented"
    assert visible("\x9b31m \x7f \r") == "\\x9b31m \\x7f \\x0d"
    assert visible("Großkunden ✓ 日本語") == "Großkunden ✓ 日本語"


def test_a_command_s_output_and_errors_show_escape_sequences_escaped(tmp_path):
    scenario = tmp_path / "evil.toml"
    scenario.write_text('title = "t"\nproves = "p"\ndoes_not_prove = "d"\n[[steps]]\nname = "A\\u001b[2J"\n'
                        'actions = ["create"]\n')
    done = CliRunner().invoke(app, ["run", str(scenario)])
    assert done.exit_code == 2
    assert "\x1b" not in done.output and "A\\x1b[2J" in done.output


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../b", "..", "."])
def test_a_name_that_leaves_its_directory_is_refused(tmp_path, name):
    with pytest.raises(Escape):
        inside(tmp_path, name)


def test_a_plain_name_stays_inside(tmp_path):
    assert inside(tmp_path, "home-B") == tmp_path / "home-B"
    (tmp_path / "link").symlink_to("/tmp")
    with pytest.raises(Escape):  # a link out of the directory does not count as inside
        inside(tmp_path, "link")
