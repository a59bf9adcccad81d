"""Every command's --help reads cleanly: its paragraphs are wrapped by the help formatter
to the terminal, never broken where the docstring happened to break its lines."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from handoff.cli import app

COMMANDS = [["run"], ["skew"], ["list"], ["runs"], ["report"], ["diff"], ["resupply"], ["sessions", "list"],
            ["witness"], ["lab"], ["export", "k8s"], ["image", "build"], ["image", "tag"], ["clean"], ["doctor"]]


def _description(text: str) -> list[str]:
    """The lines between the usage line and the first box (the options)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("╭")), len(lines))
    return [line.rstrip() for line in lines[start:end]]


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_no_paragraph_of_a_command_s_help_is_broken_mid_sentence(command, width):
    done = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": str(width), "TERM": "dumb"})
    assert done.exit_code == 0, done.output
    lines = _description(done.output)
    assert any(lines), done.output
    for line, after in zip(lines, lines[1:]):
        # The formatter wraps greedily: it breaks a line only where the next word would not
        # fit. A break before a word that would have fit, inside a paragraph, is the
        # docstring's own (a list item, which starts with '-', '*' or a number, may be).
        if not line.strip() or not after.strip() or re.match(r"\s*([-*]|\d+[.)]) ", after):
            continue
        if re.match(r"\s{3}", after):  # an example, indented under its heading: a line each
            continue
        fitted = len(line) + 1 + len(after.split()[0]) < width - 1
        assert not fitted, f"{' '.join(command)} at {width} columns breaks mid-paragraph:\n{line}\n{after}"


def test_every_command_s_summary_is_one_line_in_the_list_of_commands():
    """`handoff --help` lists each command with its first paragraph: one line at 100
    columns, however long the rest of its help is."""
    for group in ([], ["sessions"], ["export"], ["image"]):
        done = CliRunner().invoke(app, [*group, "--help"], env={"COLUMNS": "100", "TERM": "dumb"})
        listed = done.output[done.output.index("Commands"):].splitlines()[1:]
        rows = [line for line in listed if line.startswith("│ ")]
        continued = [row for row in rows if row[2:3] == " "]  # no command's name at its start: a wrapped summary
        assert rows and not continued, (group, continued)


@pytest.mark.parametrize("command", [["run"], ["report"], ["diff"], ["resupply"], ["sessions", "list"], ["lab"],
                                     ["export", "k8s"], ["clean"]], ids=lambda c: " ".join(c))
def test_examples_are_a_section_of_their_own_one_command_a_line(command):
    done = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "120", "TERM": "dumb"})
    lines = _description(done.output)
    start = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    examples = [line.strip() for line in lines[start + 1:] if line.strip()]
    assert examples and all(line.startswith("handoff ") for line in examples), examples
