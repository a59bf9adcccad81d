"""What the commands print, fitted to the terminal: tables whose widest columns wrap
inside themselves, and label-and-text lines whose text wraps under itself, never past
the edge. The width is COLUMNS when set, else the terminal's, else 100 (a pipe)."""

from __future__ import annotations

import bisect
import collections
import contextlib
import shutil
import textwrap
from typing import Any, Iterator, Sequence

import tabulate as tabulating
from tabulate import tabulate

DEFAULT_WIDTH = 100
# The most of one text (a cell, a paragraph) a terminal is shown. Text read back from a
# stored run can be of any length, and wrapping one long word costs time that grows with
# its square (textwrap): 10 million characters took minutes. A person reads no more.
MAX_SHOWN = 4_000
NARROWEST = 10  # a column is not wrapped narrower than this (or its header): narrower reads badly
GAP = 2  # tabulate's "simple" format puts two spaces between columns


def terminal_width() -> int:
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def shown(text: str) -> str:
    """``text``, cut to MAX_SHOWN characters, saying how much more there was."""
    return text if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN]}… ({len(text) - MAX_SHOWN:,} more characters)"


def wrap(text: str, width: int, **options: Any) -> list[str]:
    """textwrap.wrap of the text as shown (:func:`shown`)."""
    return textwrap.wrap(shown(text), width, **options)


def fill(text: str, width: int, **options: Any) -> str:
    """textwrap.fill of the text as shown (:func:`shown`)."""
    return textwrap.fill(shown(text), width, **options)


def _longest_line(value: Any) -> int:
    return max((len(line) for line in str(value).splitlines()), default=0)


def _longest_word(value: Any) -> int:
    return max((len(word) for word in str(value).split()), default=0)


CUT_WORD = 4  # lines a cell with a word cut (a name, an id's part) costs more than one wrapped at a space


def column_widths(rows: Sequence[Sequence[Any]], headers: Sequence[str], width: int,
                  wraps: Sequence[int] | None = None, padding: int = 0) -> list[int | None]:
    """How wide each column may be (None: as wide as it is) for the table to fit ``width``:
    of the columns that may wrap (``wraps``; all by default: never an id someone copies),
    each as narrow as NARROWEST or its header (which tabulate pads by ``padding``), the
    widths that wrap onto the fewest lines, a cell whose word is cut counting CUT_WORD more:
    so a name is cut only when wrapping other columns at their spaces would cost more."""
    count = len(headers)
    flexible = set(range(count) if wraps is None else wraps)
    # each column's cells by their longest line, and by their longest word (ascending)
    lengths = [sorted(_longest_line(row[i]) for row in rows if i < len(row)) for i in range(count)]
    spans = [collections.Counter(column) for column in lengths]  # a length's cells, counted once
    words = [sorted(_longest_word(row[i]) for row in rows if i < len(row)) for i in range(count)]
    natural = [max([_longest_line(headers[i]) + padding] + lengths[i][-1:]) for i in range(count)]
    floor = [min(max(NARROWEST, _longest_line(headers[i]) + padding), natural[i]) if i in flexible else natural[i]
             for i in range(count)]
    room = width - GAP * (count - 1)
    if sum(natural) <= room:
        return [None] * count
    if sum(floor) > room:  # as narrow as it can be read: the caller shows it another way
        return [None if floor[i] >= natural[i] else floor[i] for i in range(count)]

    def cost(i: int, wide: int) -> int:  # the lines column i's cells wrap onto at this width; a cut word more
        longer = sum(count * (-(-length // wide) - 1) for length, count in spans[i].items() if length > wide)
        return longer + CUT_WORD * (len(words[i]) - bisect.bisect_right(words[i], wide))

    # The least cost of columns 0..i at each total width so far, and their widths (a
    # knapsack over the columns: a few columns, a terminal's width in all).
    best: dict[int, tuple[int, tuple[int, ...]]] = {0: (0, ())}
    for i in range(count):
        costs = {wide: cost(i, wide) for wide in range(floor[i], min(natural[i], room) + 1)}
        grown: dict[int, tuple[int, tuple[int, ...]]] = {}
        for total, (lines, chosen) in best.items():
            for wide, more in costs.items():
                if total + wide <= room and (total + wide not in grown or lines + more < grown[total + wide][0]):
                    grown[total + wide] = (lines + more, (*chosen, wide))
        best = grown
    _, widths = min(best.values(), key=lambda found: (found[0], -sum(found[1])))
    if len(rows) <= REFINED_ROWS:
        widths = _refined(rows, list(widths), floor, natural, flexible)
    return [None if widths[i] >= natural[i] else widths[i] for i in range(count)]


# A row is as tall as its tallest cell, which the knapsack (a column at a time) cannot
# see: it gives a column room for its cells even where another column's cell in the same
# row wraps anyway. A table a person reads (up to this many rows) is then measured whole.
REFINED_ROWS = 300


def _table_cost(rows: Sequence[Sequence[Any]], widths: Sequence[int], measured: dict) -> int:
    """The table's lines at these widths, a cut word counting CUT_WORD more (``measured``:
    each cell's cost at a width, kept between trials)."""
    lines = 0
    for row in rows:
        tallest = 1
        for cell, wide in zip(row, widths):
            key = (cell, wide)
            if key not in measured:
                text = str(cell)
                measured[key] = ((len(_wrapped(text, wide).splitlines()), CUT_WORD * (_longest_word(text) > wide))
                                 if _longest_line(text) > wide else (1, 0))
            height, cut = measured[key]
            tallest = max(tallest, height)
            lines += cut
        lines += tallest
    return lines


def _refined(rows: Sequence[Sequence[Any]], widths: list[int], floor: Sequence[int], natural: Sequence[int],
             flexible: set[int]) -> list[int]:
    """The widths, with room moved a few columns at a time from one column to another
    while that makes the table shorter."""
    measured: dict = {}
    cost = _table_cost(rows, widths, measured)
    moved = True
    while moved:
        moved = False
        for giver in flexible:
            for taker in flexible - {giver}:
                for step in (1, 2, 4, 8, 16):
                    if widths[giver] - step < floor[giver] or widths[taker] >= natural[taker]:
                        break
                    trial = list(widths)
                    trial[giver] -= step
                    trial[taker] = min(trial[taker] + step, natural[taker])
                    if (found := _table_cost(rows, trial, measured)) < cost:
                        widths, cost, moved = trial, found, True
                        break
    return widths


def _wrapped(value: Any, width: int | None) -> Any:
    """A cell's text wrapped to ``width`` at spaces (never at a hyphen: names and ids hold
    them); a word longer than the column is cut."""
    if width is None:
        return value
    return "\n".join(piece for line in str(value).splitlines() or [""]
                     for piece in textwrap.wrap(line, width, break_on_hyphens=False) or [""])  # cut in table()


@contextlib.contextmanager
def headers_unpadded() -> Iterator[None]:
    """tabulate widens every column to its header plus two spaces; a fitted table spends
    those columns on content instead (its columns are two spaces apart anyway)."""
    saved, tabulating.MIN_PADDING = tabulating.MIN_PADDING, 0
    try:
        yield
    finally:
        tabulating.MIN_PADDING = saved


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], width: int | None = None,
          wraps: Sequence[int] | None = None, unpadded: bool = False, **options: Any) -> str:
    """``tabulate(rows, headers, tablefmt="simple")`` no wider than ``width`` (the
    terminal's by default): its columns in ``wraps`` (all by default) wrap as far as
    they need to; a table that still does not fit is shown a block a row (:func:`records`).
    ``unpadded``: headers are not widened by tabulate's two spaces."""
    rows = [[shown(cell) if isinstance(cell, str) else cell for cell in row] for row in rows]
    width = width or terminal_width()
    padding = 0 if unpadded else tabulating.MIN_PADDING
    limits = column_widths(rows, headers, width, wraps, padding)
    wrapped = [[_wrapped(cell, limits[i] if i < len(limits) else None) for i, cell in enumerate(row)] for row in rows]
    with headers_unpadded() if unpadded else contextlib.nullcontext():
        fitted = tabulate(wrapped, headers=list(headers), tablefmt="simple", **options)
    if max(map(len, fitted.splitlines()), default=0) <= width:
        return fitted
    return records(rows, headers, width)


def records(rows: Sequence[Sequence[Any]], headers: Sequence[str], width: int) -> str:
    """A table too wide for the terminal however its columns wrap, as one block a row:
    each column's name, then its value wrapped beside it (as ``psql``'s expanded view)."""
    names = [" ".join(str(header).split()) for header in headers]
    indent = max(map(len, names), default=0) + GAP
    blocks = []
    for row in rows:
        lines = []
        for name, value in zip(names, row):
            text = " ".join(str(value).split()) or "—"
            lines += labelled(name, text, indent, width)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def paragraph(text: str, width: int | None = None) -> str:
    """A line of prose wrapped to the terminal (left as it is when it fits); a word longer
    than a line (a path) is cut."""
    width = width or terminal_width()
    if len(text) <= width:
        return text
    return "\n".join(wrap(text, width, break_on_hyphens=False)) or shown(text)


def labelled(label: str, text: str, indent: int, width: int | None = None) -> list[str]:
    """``label`` padded to ``indent``, then ``text`` wrapped to ``width``, every later line
    starting under the text's first."""
    room = max((width or terminal_width()) - indent, 20)
    lines = wrap(text, room, break_on_hyphens=False) or [""]
    return [f"{label:<{indent}}{lines[0]}"] + [" " * indent + line for line in lines[1:]]
