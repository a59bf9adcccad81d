"""Text as the page draws it: how wide a string is in each style, and a label wrapped onto
as many lines as it needs to fit a width. Widths are the sums of DejaVu Sans's advance
widths (the page's font; the fallbacks, Arial and Helvetica, are narrower), which keeps
every layout deterministic and testable without a browser."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

EPSILON = 0.01  # px: what rounding may take off a sum of widths
Piece = tuple[str, str]  # (text, class): "" for plain text, "fact seen", "fact absent", "mark"
Line = tuple[Piece, ...]

# DejaVu Sans's advance widths at 12 px, as Chromium measures them, for the characters
# from " " to "~"; any other character is taken as the widest of the symbols the labels use.
_ASCII = "".join(chr(code) for code in range(32, 127))
_ADVANCES = {
    "regular": "3.81 4.81 5.52 10.05 7.63 11.40 9.36 3.30 4.68 4.68 6.00 10.05 3.81 4.33 3.81 4.04 " + "7.63 " * 10 +
               "4.04 4.04 10.05 10.05 10.05 6.37 12.00 8.21 8.23 8.38 9.24 7.58 6.90 9.30 9.02 3.54 3.54 7.87 6.69 "
               "10.35 8.98 9.45 7.24 9.45 8.34 7.62 7.33 8.78 8.21 11.87 8.22 7.33 8.22 4.68 4.04 4.68 10.05 6.00 "
               "6.00 7.35 7.62 6.60 7.62 7.38 4.22 7.62 7.61 3.33 3.33 6.95 3.33 11.69 7.61 7.34 7.62 7.62 4.93 6.25 "
               "4.71 7.61 7.10 9.81 7.10 7.10 6.30 7.63 4.04 7.63 10.05",
    "bold": "4.18 5.47 6.25 10.05 8.35 12.02 10.46 3.67 5.48 5.48 6.28 10.05 4.56 4.98 4.56 4.38 " + "8.35 " * 10 +
            "4.80 4.80 10.05 10.05 10.05 6.96 12.00 9.29 9.15 8.81 9.96 8.20 8.20 9.85 10.04 4.46 4.46 9.30 7.65 "
            "11.94 10.04 10.20 8.79 10.20 9.24 8.64 8.19 9.74 9.29 13.24 9.25 8.69 8.70 5.48 4.38 5.48 10.05 6.00 "
            "6.00 8.10 8.59 7.11 8.59 8.14 5.22 8.59 8.54 4.11 4.11 7.98 4.11 12.50 8.54 8.24 8.59 8.59 5.92 7.14 "
            "5.74 8.54 7.82 11.09 7.74 7.82 6.98 8.54 4.38 8.54 10.05",
}
_WIDTHS = {style: dict(zip(_ASCII, map(float, numbers.split()))) for style, numbers in _ADVANCES.items()}
OTHER = 12.0  # px: a character outside the table (“ ” → ✓ ✗ … are 6 to 12 px)
MONO = 7.23  # DejaVu Sans Mono, every character
SIZES = {"regular": ("regular", 1.0), "bold": ("bold", 1.0), "small": ("regular", 11 / 12), "mono": ("mono", 1.0),
         "title": ("bold", 13 / 12)}


@lru_cache(maxsize=8192)
def text_px(text: str, style: str = "regular") -> float:
    """How wide ``text`` is drawn in a style: regular, bold, mono (12 px), small (11 px),
    title (13 px bold)."""
    face, scale = SIZES[style]
    if face == "mono":
        return len(text) * MONO * scale
    widths = _WIDTHS[face]
    return sum(widths.get(char, OTHER) for char in text) * scale


def text_width(line: Line | list[Piece], how: str) -> float:
    """How wide a line is drawn (a space that ends it takes no room; the fact is bold)."""
    line = list(line)
    while line and line[-1][0].strip(" ") == "":
        line.pop()
    if line:
        line[-1] = (line[-1][0].rstrip(" "), line[-1][1])
    return sum(text_px(text, "bold" if cls.startswith("fact") else how) for text, cls in line)


_BREAK = re.compile(r"(?<=[ (=/,;|-])")  # a line may break after a space, and inside an id or a call


@dataclass(frozen=True)
class _Unit:
    """Pieces no line breaks inside, measured: without and with their trailing spaces."""

    pieces: tuple[Piece, ...]
    bare: float
    full: float
    characters: tuple[tuple[str, str, float], ...]  # each character, its piece's class, its width


def _units(line: Line, how: str) -> list[_Unit]:
    """The pieces cut where a line may break, measured; the fact and its mark are never
    parted."""
    units: list[list[Piece]] = []
    for text, cls in line:
        chunks = [text] if cls else [chunk for chunk in _BREAK.split(text) if chunk]
        for index, chunk in enumerate(chunks):
            if cls == "mark" or (cls.startswith("fact") and units and index == 0 and
                                 not units[-1][-1][0].endswith(" ")):
                units[-1].append((chunk, cls))  # glued to what precedes it
            else:
                units.append([(chunk, cls)])
    return [_measured(tuple((char, cls, text_px(char, "bold" if cls.startswith("fact") else how))
                            for text, cls in unit for char in text)) for unit in units]


def _measured(characters: tuple[tuple[str, str, float], ...]) -> _Unit:
    full = sum(wide for _, _, wide in characters)
    trailing = 0.0
    for char, _, wide in reversed(characters):
        if char != " ":
            break
        trailing += wide
    return _Unit(_merged([(char, cls) for char, cls, _ in characters]), full - trailing, full, characters)


def _hard_split(unit: _Unit, width: float) -> list[_Unit]:
    """A unit wider than a whole line, in parts each at most ``width`` wide (at least a
    character each)."""
    parts: list[list[tuple[str, str, float]]] = [[]]
    used = 0.0
    for char, cls, wide in unit.characters:
        if parts[-1] and used + wide > width + EPSILON and char != " ":
            parts.append([])
            used = 0.0
        parts[-1].append((char, cls, wide))
        used += wide
    return [_measured(tuple(part)) for part in parts]


def _merged(line: list[Piece]) -> Line:
    """Neighbouring pieces of one class as one piece (joined once: a 200,000-character
    fact added a character at a time took minutes)."""
    return tuple(("".join(text for text, _ in run), cls) for cls, run in itertools.groupby(line, key=lambda piece: piece[1]))


def _wrapped(units: list[_Unit], width: float) -> list[list[Piece]]:
    lines: list[list[Piece]] = [[]]
    used = 0.0  # the line so far, its trailing spaces too (they take room once something follows them)
    for unit in units:
        for part in (_hard_split(unit, width) if unit.bare > width + EPSILON else [unit]):
            if lines[-1] and used + part.bare > width + EPSILON:
                lines.append([])
                used = 0.0
            lines[-1].extend(part.pieces)
            used += part.full
    return lines


def wrap(line: Line, width: float, how: str) -> tuple[Line, ...]:
    """``line`` on as many lines as it needs to be at most ``width`` px wide each, in the
    style ``how``. Every character is kept (a line ends with the space it broke at), so
    the lines joined are the text again."""
    return tuple(_merged(line) for line in _wrapped(_units(line, how), width))


def plain(line: Line) -> str:
    """A wrapped line's text, without the space it broke at."""
    return "".join(text for text, _ in line).rstrip(" ")


def line_counts(line: Line, how: str, narrowest: float) -> list[tuple[float, int]]:
    """The widths at which ``line`` takes fewer lines: (room for the text, lines there),
    the room narrowest first, down to one line at its full width; no room is taken as
    narrower than ``narrowest``."""
    units = _units(line, how)
    full = text_width(line, how)
    found = [(full, 1)]
    lines = len(_wrapped(units, max(full / 8, narrowest))) if full > 0 else 1
    for count in range(2, min(lines, 8) + 1):  # the least room for each count, by halving
        low, high = 0.0, full
        while high - low > 2:
            middle = (low + high) / 2
            if len(_wrapped(units, middle)) <= count:
                high = middle
            else:
                low = middle
        found.append((high, count))
    return sorted(found)
