"""A Ctrl-C that comes before any command has its own handling in place says so, exits
130, and shows no traceback: while the tool is still importing its command line, and
once typer has the command but before the command's handling begins (typer alone would
exit 130 without a word). The interrupt is raised where it would land, not timed."""

from __future__ import annotations

import sys

import pytest

from handoff import __main__ as entry
from handoff import cli


class _InterruptedImport:
    """A finder that raises what a Ctrl-C raises while ``name`` is being imported."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, name, path=None, target=None):
        if name == self.name:
            raise KeyboardInterrupt
        return None


def test_while_the_command_line_is_imported(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "handoff.cli")
    monkeypatch.setattr(sys, "meta_path", [_InterruptedImport("handoff.cli"), *sys.meta_path])
    with pytest.raises(SystemExit) as done:
        entry.main()
    assert done.value.code == 130
    assert capsys.readouterr().err == "error: interrupted while the tool was loading; nothing was started\n"


def _run_interrupted_in(name: str, monkeypatch, tmp_path) -> SystemExit:
    """`handoff run same-process` with a Ctrl-C raised where the run calls handoff.app.matrix's ``name``."""
    from handoff.app import matrix

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(matrix, name, interrupted)
    monkeypatch.setattr(sys, "argv", ["handoff", "run", "same-process", "--runs-dir", str(tmp_path)])
    with pytest.raises(SystemExit) as done:
        cli.main()
    return done.value


def test_before_a_commands_own_handling(monkeypatch, capsys, tmp_path):
    done = _run_interrupted_in("MatrixOptions", monkeypatch, tmp_path)  # built before `run` catches interrupts
    assert done.code == 130
    assert capsys.readouterr().err == "error: interrupted; every worker, runtime and temporary file was removed\n"


def test_a_command_that_announced_its_interrupt_is_not_announced_again(monkeypatch, capsys, tmp_path):
    done = _run_interrupted_in("run_matrix", monkeypatch, tmp_path)  # inside the command's own handling
    assert done.code == 130
    assert capsys.readouterr().err == "error: interrupted; every worker, runtime and temporary file was removed\n"
