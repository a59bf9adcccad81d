"""What the commands print fits the terminal (handoff/report/fit.py): tables wrap the
columns that may wrap, never an id; a table that cannot fit becomes a block a row; and
every listed command stays within 80 and 100 columns."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from handoff.cli import app
from handoff.report import fit
from tests.unit.test_sessions_list import closed_session, stored_run

ROWS = [["handoff-0123456789abcdef", "a long description of what this row is about, in several words", "3"],
        ["handoff-fedcba9876543210", "short", "12"]]
HEADERS = ["id", "what", "turns"]


def widest(text: str) -> int:
    return max(map(len, text.splitlines()), default=0)


def test_a_table_that_fits_is_what_tabulate_prints():
    from tabulate import tabulate

    assert fit.table(ROWS, HEADERS, width=200) == tabulate(ROWS, headers=HEADERS, tablefmt="simple")


@pytest.mark.parametrize("width", [60, 50, 45])
def test_a_narrower_terminal_wraps_the_columns_that_may_wrap_and_never_an_id(width):
    shown = fit.table(ROWS, HEADERS, width=width, wraps=(1,))
    assert widest(shown) <= width
    assert "handoff-0123456789abcdef" in shown and "handoff-fedcba9876543210" in shown  # whole, to be copied
    assert " ".join(shown.split()).count("several words") == 1  # wrapped at spaces, nothing lost


def test_a_name_is_cut_only_when_wrapping_the_other_columns_at_spaces_costs_more_lines():
    """As the run's table: scenario names, and where each turn ran (a step and a number).
    The widest column is the names', yet the room is made by wrapping a few cells of the
    others at their spaces; only when no such room is left is a name cut."""
    rows = [["container-restart-anonymous-volume", "A 1@ctr-a-1", "B 1@ctr-a-1"],
            ["resupply-on-resume", "provider-omitted 32261", "—"],
            ["", "A 2960", "all-passed 32306"]]
    shown = fit.table(rows, ["scenario", "told in", "asked in"], width=66, wraps=(0, 1, 2))
    assert widest(shown) <= 66 and "container-restart-anonymous-volume" in shown
    assert "provider-omitted\n" in shown or "all-passed\n" in shown  # the room, made at a space
    narrow = fit.table(rows, ["scenario", "told in", "asked in"], width=50, wraps=(0, 1, 2))
    assert widest(narrow) <= 50 and "container-restart-anonymous-volume" not in narrow


def test_a_table_too_wide_for_any_wrapping_is_a_block_a_row():
    shown = fit.table(ROWS, HEADERS, width=32, wraps=(1,))
    assert widest(shown) <= 32
    first, second = shown.split("\n\n")
    assert first.splitlines()[0] == "id     handoff-0123456789abcdef" and second.splitlines()[-1] == "turns  12"


def test_a_labelled_line_wraps_under_its_text_and_prose_is_left_alone_when_it_fits():
    assert fit.labelled("name", "one two three four five six", 6, width=26) == ["name  one two three four",
                                                                                "      five six"]
    assert fit.paragraph("ends with a space ", width=40) == "ends with a space "
    assert fit.paragraph("a b c d e f", width=5) == "a b c\nd e f"


@pytest.fixture
def stored(tmp_path):
    runs = tmp_path / "runs"
    first, home = stored_run(runs), tmp_path / "home"
    closed_session(home, "handoff-aaaaaaaaaaaaaaaa")
    return runs, first, home


@pytest.mark.parametrize("columns", ["80", "100"])
def test_every_listing_command_fits_80_and_100_columns(stored, monkeypatch, columns):
    runs, run_id, home = stored
    monkeypatch.setenv("COLUMNS", columns)
    runner = CliRunner()
    for command in (["runs"], ["list"], ["sessions", "list", run_id], ["sessions", "list", str(home)],
                    ["diff", run_id, run_id], ["report", run_id], ["doctor"]):
        extra = ["--runs-dir", str(runs)] if command[0] in ("runs", "diff", "report") or command[:2] == [
            "sessions", "list"] and command[2] == run_id else []
        result = runner.invoke(app, command + extra)
        assert result.exit_code in (0, 1, 4), (command, result.output)  # 4: a run with turns not judged
        assert widest(result.output) <= int(columns), (command, [line for line in result.output.splitlines()
                                                                 if len(line) > int(columns)])


def test_text_of_any_length_is_shown_cut_to_what_a_person_reads():
    """A stored run's texts come back at any length: a table, a paragraph or a label's text
    shows MAX_SHOWN characters of one and says how many more there were (wrapping ten
    million characters whole took minutes)."""
    huge = "7" * 1_000_000
    said = f"…({1_000_000 - fit.MAX_SHOWN:,}morecharacters)"  # as it reads with its spaces and breaks taken out
    for shown in (fit.paragraph(huge, 100), "\n".join(fit.labelled("runtime", huge, 10, 100)),
                  fit.table([["a", huge], ["b", "short"]], ["name", "value"], width=100), fit.fill(huge, 80)):
        assert said in "".join(shown.split()) and shown.count("7") == fit.MAX_SHOWN
    assert fit.shown("short") == "short"
    assert fit.column_widths([["a", huge]], ["name", "value"], 100) == [None, 94]


def test_room_goes_where_it_shortens_the_table_not_to_a_cell_whose_row_wraps_anyway():
    """A row is as tall as its tallest cell: the learner's table had its 'fact sent'
    column widened for cells whose questions wrapped on the same rows anyway, while
    other rows' questions wrapped for want of that room."""
    rows = [["one", "A → bob-guarded: lost, bob-raw: kept, alice-again: refused", "no request, yes, no request"],
            ["two", "A → guarded: refused, raw: kept, minted: kept", "no request, yes, yes"],
            ["three", "A → B: kept, C: kept, D: kept, E: kept", "yes, yes, yes, yes"],
            ["four", "A → B: lost, C: kept, D: kept", "no, yes, yes"]]
    headers = ["scenario", "told → asked: verdict", "fact sent"]
    shown = fit.table(rows, headers, width=64, wraps=(1, 2), unpadded=True)
    room = 64 - len("scenario") - 2 * fit.GAP  # for the two text columns
    best = min(_lines_at(rows, middle, room - middle) for middle in range(len(headers[1]), room - fit.NARROWEST + 1))
    assert widest(shown) <= 64 and len(shown.splitlines()) == best


def _lines_at(rows, middle, last):
    """The table's lines with its two text columns wrapped at these widths."""
    import textwrap
    height = sum(max(1, *(len(textwrap.wrap(cell, wide, break_on_hyphens=False)) for cell, wide in
                          zip(row[1:], (middle, last)))) for row in rows)
    return 2 + height
