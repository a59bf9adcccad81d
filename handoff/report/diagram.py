"""Where a sequence diagram's parts go on the page: pure arithmetic from its data.

Every message gets a row of its own, top to bottom in the order it happened, so no two
labels ever share a row. A diagram is laid out to fit WIDTH, the page's column: nothing
is cut, a label that does not fit between the two lifelines it joins is wrapped onto as
many lines as it needs (its row grows), and a note too long for the room beside its
lifeline wraps too, on whichever side of it leaves it fewer lines.

Each step's worker and runtime are processes that live for that step only, and the steps
run one after another: so every step's worker shares one column and every runtime
another, and each appears (its header box, pid and host) where its step begins and ends
where its step's last message is. The coordinator, the stores and the model live through
the whole scenario and head the diagram. Where a sequence's steps overlap in time (no
record the lab makes does), every participant gets a column of its own instead.

Text widths are the sums of DejaVu Sans's advance widths (the page's font; the fallbacks,
Arial and Helvetica, are narrower), which keeps the layout deterministic and testable
without a browser. The template (templates/diagram.svg.j2) only draws what is placed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from handoff.report.sequence import Message, Participant, Sequence

WIDTH = 1180.0  # px: the page's column at 1280 px (the style sheet scales a wider diagram down to it)
LINE = 15  # px per line of a label or a lane's header
ROW = 26  # px per message of one line
MARGIN = 14
PADDING = 10  # inside a lane's header box or a note, each side
HEADER_TEXT = 172  # px: a lane's header text wider than this wraps
BAND_GAP = 12  # above the header boxes of a step's worker and runtime
MIN_GAP = 56  # between two lifelines, however short their labels
ARROW_ROOM = 28  # what an arrow needs besides its label: its head and some air
ACTIVATION = 8  # the width of the bar that shows when a worker or runtime is busy
FACT_SUFFIX = " ✓"  # after a fact the model was sent (" ✗" when it was not)
EPSILON = 0.01  # px: what rounding may take off a sum of gaps
STEP_LANES = ("worker:", "runtime:")  # a step's processes: they live while the step runs

Piece = tuple[str, str]  # (text, class): "" for plain text, "fact seen", "fact absent", "mark"
Line = tuple[Piece, ...]


@dataclass(frozen=True)
class Lane:
    participant: Participant
    x: float  # the lifeline
    width: float  # the header box
    lines: tuple[str, ...]  # the header's lines: the title's first, then the details'
    title_lines: int  # how many of them are the title
    top: float  # the header box's top
    height: float  # the header box's height
    end: float  # where the lifeline ends

    @property
    def left(self) -> float:
        return self.x - self.width / 2

    @property
    def line_ys(self) -> tuple[float, ...]:  # the baseline of each line of the header
        return tuple(self.top + PADDING + (i + 1) * LINE - 3 for i in range(len(self.lines)))


@dataclass(frozen=True)
class Arrow:
    message: Message
    row: int
    x1: float  # where it starts (the sender's lifeline)
    x2: float  # where its head is (the receiver's)
    y: float
    label_x: float  # the label starts here, above the line
    lines: tuple[Line, ...]  # the label, wrapped; the last line sits on the arrow

    @property
    def rightwards(self) -> bool:
        return self.x2 >= self.x1

    @property
    def line_ys(self) -> tuple[float, ...]:
        return tuple(self.y - 6 - (len(self.lines) - 1 - i) * LINE for i in range(len(self.lines)))


@dataclass(frozen=True)
class Note:
    message: Message
    row: int
    x: float
    y: float  # top of its box
    width: float
    height: float
    lines: tuple[Line, ...]

    @property
    def line_ys(self) -> tuple[float, ...]:
        return tuple(self.y + 15 + i * LINE for i in range(len(self.lines)))


@dataclass(frozen=True)
class Activation:
    key: str
    x: float  # left edge
    y1: float
    y2: float


@dataclass(frozen=True)
class Diagram:
    width: float
    height: float
    lanes: tuple[Lane, ...]
    arrows: tuple[Arrow, ...]
    notes: tuple[Note, ...]
    activations: tuple[Activation, ...]


# --- text -------------------------------------------------------------------------------

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


def style(kind: str) -> str:
    """How a message of this kind is drawn: the ids the coordinator passes are monospaced;
    faults, errors and refusals are bold."""
    if kind == "id":
        return "mono"
    if kind in ("fault", "error", "refusal"):
        return "bold"
    return "regular"


def pieces(message: Message) -> Line:
    """A message's label as drawn: its text, then the fact and its mark."""
    if message.fact is None:
        return ((message.label, ""),)
    seen = "seen" if message.fact.seen else "absent"
    return ((message.label + " ", ""), (f"'{message.fact.value}'", f"fact {seen}"),
            (FACT_SUFFIX if message.fact.seen else " ✗", "mark"))


def text_width(line: Line | list[Piece], how: str) -> float:
    """How wide a line is drawn (a space that ends it takes no room; the fact is bold)."""
    line = list(line)
    while line and line[-1][0].strip(" ") == "":
        line.pop()
    if line:
        line[-1] = (line[-1][0].rstrip(" "), line[-1][1])
    return sum(text_px(text, "bold" if cls.startswith("fact") else how) for text, cls in line)


def label_width(message: Message) -> float:
    """How wide a message's label is on one line: its text, then the fact and its mark."""
    return text_width(pieces(message), style(message.kind))


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
    out: list[Piece] = []
    for text, cls in line:
        if out and out[-1][1] == cls:
            out[-1] = (out[-1][0] + text, cls)
        else:
            out.append((text, cls))
    return tuple(out)


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


def _text(line: Line) -> str:
    return "".join(text for text, _ in line).rstrip(" ")


def _header(participant: Participant) -> tuple[tuple[str, ...], int, float]:
    """A lane's header lines (its title's, then its details'), how many are the title's,
    and the width of its box."""
    title = [_text(line) for line in wrap(((participant.title, ""),), HEADER_TEXT, "bold")]
    details = [_text(line) for detail in participant.details for line in wrap(((detail, ""),), HEADER_TEXT, "small")]
    widest = max([text_px(line, "bold") for line in title] + [text_px(line, "small") for line in details])
    return (*title, *details), len(title), widest + 2 * PADDING


# --- columns ----------------------------------------------------------------------------

def _steps_in_turn(sequence: Sequence) -> dict[str, str] | None:
    """Each step lane's step, when the steps' messages come one step after another (then
    a step's worker and runtime can take the columns the previous step's have left);
    None when two steps' messages interleave."""
    step_of = {p.key: p.key.split(":", 1)[1] for p in sequence.participants if p.key.startswith(STEP_LANES)}
    if not step_of:
        return None
    order = list(dict.fromkeys(step_of.values()))
    last = -1
    for step in order:
        rows = [row for row, m in enumerate(sequence.messages) if step_of.get(m.source) == step or
                step_of.get(m.target) == step]
        if rows and rows[0] <= last:
            return None
        last = rows[-1] if rows else last
    return step_of


def _columns(sequence: Sequence, shared: bool) -> dict[str, int]:
    """Each participant's column: the steps' workers share one and their runtimes another
    when ``shared``, else every participant has its own."""
    def name(key: str) -> str:
        return next((prefix for prefix in STEP_LANES if key.startswith(prefix)), key) if shared else key

    found: dict[str, int] = {}
    for participant in sequence.participants:
        found.setdefault(name(participant.key), len(found))
    return {p.key: found[name(p.key)] for p in sequence.participants}


def _line_counts(message: Message) -> list[tuple[float, int]]:
    """The widths at which a label takes fewer lines: (room for the text, lines there),
    the room narrowest first, down to one line at its full width."""
    how = style(message.kind)
    units = _units(pieces(message), how)
    full = text_width(pieces(message), how)
    found = [(full, 1)]
    lines = len(_wrapped(units, max(full / 8, MIN_GAP - ARROW_ROOM))) if full > 0 else 1
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


def _lines_at(counts: list[tuple[float, int]], room: float) -> int:
    fitting = [count for width, count in counts if width <= room + EPSILON]
    return min(fitting) if fitting else counts[0][1] + 1


def _gaps(sequence: Sequence, column: dict[str, int], widths: list[float], room: float) -> list[float]:
    """The distance between each column's lifeline and the next, ``room`` in all at most:
    first what the headers need, then, while ``room`` lasts, the widening that saves the
    most lines of label per pixel (a label whose columns are a little too close before
    one that would take the rest). A label still too long for its columns wraps."""
    gaps = [max(MIN_GAP, (widths[i] + widths[i + 1]) / 2 + 12) for i in range(len(widths) - 1)]
    spare = room - sum(gaps)
    spans: dict[tuple[int, int], list[list[tuple[float, int]]]] = {}
    for message in sequence.messages:
        a, b = sorted((column[message.source], column[message.target]))
        if a != b:
            spans.setdefault((a, b), []).append(_line_counts(message))
    while spare > 0.5:
        best = None  # (lines saved per px, -px, span, px)
        for (a, b), labels in spans.items():
            now = sum(gaps[a:b]) - ARROW_ROOM
            lines = sum(_lines_at(counts, now) for counts in labels)
            for wanted in {width for counts in labels for width, _ in counts if now + EPSILON < width <= now + spare}:
                saved = lines - sum(_lines_at(counts, wanted) for counts in labels)
                option = (saved / (wanted - now), now - wanted, (a, b), wanted - now)
                if saved > 0 and (best is None or option[:2] > best[:2]):
                    best = option
        if best is None:
            break
        (a, b), more = best[2], best[3]
        for i in range(a, b):
            gaps[i] += more / (b - a)
        spare -= more
    return gaps


# --- the layout -------------------------------------------------------------------------

def _note(message: Message, x: float, right_edge: float) -> tuple[tuple[Line, ...], float, float]:
    """A note's lines and its box's left edge and width: beside its lifeline, on the right
    unless the left leaves it fewer lines."""
    how = style(message.kind)
    right = right_edge - MARGIN - (x + ACTIVATION) - 2 * PADDING
    left = x - ACTIVATION - MARGIN - 2 * PADDING
    on_right = wrap(pieces(message), right, how)
    on_left = wrap(pieces(message), left, how) if left > right else on_right
    lines = on_right if len(on_right) <= len(on_left) else on_left
    box = max(text_width(line, how) for line in lines) + 2 * PADDING
    return lines, (x + ACTIVATION if lines is on_right else x - ACTIVATION - box), box


def _bands(sequence: Sequence, step_of: dict[str, str] | None) -> tuple[set[str], dict[int, list[list[str]]]]:
    """Which lanes head the diagram, and before which row each step's worker and runtime
    appear (before its first message; a step with none, before the next step's)."""
    if not step_of:
        return {p.key for p in sequence.participants}, {}
    first_row: dict[str, int] = {}
    for row, message in enumerate(sequence.messages):
        for key in (message.source, message.target):
            if key in step_of:
                first_row.setdefault(step_of[key], row)
    bands: dict[int, list[list[str]]] = {}
    at = len(sequence.messages)
    for step in reversed(list(dict.fromkeys(step_of.values()))):
        at = first_row.get(step, at)
        bands.setdefault(at, []).insert(0, [key for key, s in step_of.items() if s == step])
    on_top = {p.key for p in sequence.participants if p.key not in step_of}
    if bands.get(0):  # the first step's processes head the diagram with the others
        on_top |= set(bands[0].pop(0))
    return on_top, bands


def layout(sequence: Sequence, width: float = WIDTH) -> Diagram:
    """Where everything goes, within ``width`` when the headers leave room for it (a
    sequence whose lanes cannot all share columns may need more)."""
    messages = sequence.messages
    if not sequence.participants:
        return Diagram(2 * MARGIN, 2 * MARGIN, (), (), (), ())
    step_of = _steps_in_turn(sequence)
    column = _columns(sequence, step_of is not None)
    headers = {p.key: _header(p) for p in sequence.participants}
    header_height = {key: PADDING + len(lines) * LINE + PADDING / 2 for key, (lines, _, _) in headers.items()}
    widths = [0.0] * (max(column.values()) + 1)
    for key, (_, _, box) in headers.items():
        widths[column[key]] = max(widths[column[key]], box)
    xs = [MARGIN + widths[0] / 2]
    for gap in _gaps(sequence, column, widths, width - 2 * MARGIN - widths[0] / 2 - widths[-1] / 2):
        xs.append(xs[-1] + gap)
    where = {key: xs[index] for key, index in column.items()}
    right_edge = max(width, xs[-1] + widths[-1] / 2 + MARGIN)  # what a note may reach

    # Top to bottom: the header boxes, then each message's row (as tall as its lines),
    # with a step's header boxes before its first message.
    on_top, bands = _bands(sequence, step_of)
    tops = dict.fromkeys(on_top, float(MARGIN))
    cursor = MARGIN + max((header_height[key] for key in on_top), default=0.0)
    wrapped: list[tuple[Line, ...]] = []
    ys: list[float] = []
    for row in range(len(messages) + 1):
        for keys in bands.get(row, []):
            cursor += BAND_GAP
            tops.update(dict.fromkeys(keys, cursor))
            cursor += max(header_height[key] for key in keys)
        if row == len(messages):
            break
        message = messages[row]
        if message.is_note:
            lines = _note(message, where[message.source], right_edge)[0]
        else:
            span = abs(where[message.target] - where[message.source])
            lines = wrap(pieces(message), span - ARROW_ROOM, style(message.kind))
        wrapped.append(lines)
        cursor += ROW + (len(lines) - 1) * LINE
        ys.append(cursor)
    height = cursor + ROW

    arrows, notes = [], []
    busy: dict[str, list[int]] = {}
    for row, (message, lines, y) in enumerate(zip(messages, wrapped, ys)):
        for key in {message.source, message.target}:
            busy.setdefault(key, []).append(row)
        if message.is_note:
            _, x, box = _note(message, where[message.source], right_edge)
            notes.append(Note(message, row, x, y - 15 - (len(lines) - 1) * LINE, box, 22 + (len(lines) - 1) * LINE,
                              lines))
            continue
        x1, x2 = where[message.source], where[message.target]
        shift = ACTIVATION / 2 if x2 > x1 else -ACTIVATION / 2  # arrows leave and meet the activation bars' edges
        arrows.append(Arrow(message, row, x1 + shift, x2 - shift, y, min(x1, x2) + ACTIVATION / 2 + 6, lines))
    activations = tuple(
        Activation(key, where[key] - ACTIVATION / 2, ys[min(rows)] - ROW / 2, ys[max(rows)] + ROW / 4)
        for key, rows in busy.items() if key.startswith(STEP_LANES))

    lanes = []
    for participant in sequence.participants:
        key = participant.key
        lines, title_lines, box = headers[key]
        if step_of and key in step_of:  # a step's process: its lifeline ends with its step
            rows = busy.get(key)
            end = ys[max(rows)] + ROW / 3 if rows else tops[key] + header_height[key] + ROW / 3
        else:
            end = height - 4
        lanes.append(Lane(participant, where[key], box, lines, title_lines, tops[key], header_height[key], end))
    right = max([xs[-1] + widths[-1] / 2] + [note.x + note.width for note in notes]) + MARGIN
    return Diagram(right, height, tuple(lanes), tuple(arrows), tuple(notes), activations)
