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

Text is measured and wrapped as typeset.py says. The template (templates/diagram.svg.j2) only draws what is placed here.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass

from handoff.report.sequence import Message, Participant, Sequence
from handoff.report.typeset import EPSILON, Line, line_counts, plain, text_px, text_width, wrap

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
STEP_LANES = ("worker:", "runtime:")  # a step's processes: they live while the step runs


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

    @functools.cached_property
    def line_ys(self) -> tuple[float, ...]:  # the baseline of each line of the header (read once a line)
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


# --- a message's label ----------------------------------------------------------------


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


def label_width(message: Message) -> float:
    """How wide a message's label is on one line: its text, then the fact and its mark."""
    return text_width(pieces(message), style(message.kind))


def _header(participant: Participant) -> tuple[tuple[str, ...], int, float]:
    """A lane's header lines (its title's, then its details'), how many are the title's,
    and the width of its box."""
    title = [plain(line) for line in wrap(((participant.title, ""),), HEADER_TEXT, "bold")]
    details = [plain(line) for detail in participant.details for line in wrap(((detail, ""),), HEADER_TEXT, "small")]
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
    rows_of: dict[str, list[int]] = {}  # each step's rows, in one pass over the messages
    for row, m in enumerate(sequence.messages):
        for step in {step_of.get(m.source), step_of.get(m.target)} - {None}:
            rows_of.setdefault(step, []).append(row)
    last = -1
    for step in order:
        rows = rows_of.get(step, [])
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
    """The widths at which a label takes fewer lines; an arrow's has at least the room
    between two lifelines MIN_GAP apart."""
    return line_counts(pieces(message), style(message.kind), MIN_GAP - ARROW_ROOM)


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
    lanes_of: dict[str, list[str]] = {}
    for key, step in step_of.items():
        lanes_of.setdefault(step, []).append(key)
    bands: dict[int, list[list[str]]] = {}
    at = len(sequence.messages)
    for step in reversed(list(lanes_of)):
        at = first_row.get(step, at)
        bands.setdefault(at, []).insert(0, lanes_of[step])
    on_top = {p.key for p in sequence.participants if p.key not in step_of}
    if bands.get(0):  # the first step's processes head the diagram with the others
        on_top |= set(bands[0].pop(0))
    return on_top, bands


def layout(sequence: Sequence, width: float = WIDTH) -> Diagram:
    """Where everything goes, within ``width`` when the headers leave room for it (a
    sequence whose lanes cannot all share columns may need more)."""
    if not sequence.participants:
        return Diagram(2 * MARGIN, 2 * MARGIN, (), (), (), ())
    step_of = _steps_in_turn(sequence)
    column = _columns(sequence, step_of is not None)
    headers = {p.key: _header(p) for p in sequence.participants}
    widths = [0.0] * (max(column.values()) + 1)
    for key, (_, _, box) in headers.items():
        widths[column[key]] = max(widths[column[key]], box)
    xs = [MARGIN + widths[0] / 2]
    for gap in _gaps(sequence, column, widths, width - 2 * MARGIN - widths[0] / 2 - widths[-1] / 2):
        xs.append(xs[-1] + gap)
    where = {key: xs[index] for key, index in column.items()}
    right_edge = max(width, xs[-1] + widths[-1] / 2 + MARGIN)  # what a note may reach
    rows = _rows(sequence, step_of, headers, where, right_edge)
    arrows, notes, busy = _drawn(sequence.messages, rows, where, right_edge)
    activations = tuple(Activation(key, where[key] - ACTIVATION / 2, rows.ys[min(at)] - ROW / 2, rows.ys[max(at)] + ROW / 4)
                        for key, at in busy.items() if key.startswith(STEP_LANES))
    lanes = []
    for participant in sequence.participants:
        key = participant.key
        lines, title_lines, box = headers[key]
        top, header_height = rows.tops[key], rows.header_height[key]
        if step_of and key in step_of:  # a step's process: its lifeline ends with its step
            busy_rows = busy.get(key)
            end = rows.ys[max(busy_rows)] + ROW / 3 if busy_rows else top + header_height + ROW / 3
        else:
            end = rows.height - 4
        lanes.append(Lane(participant, where[key], box, lines, title_lines, top, header_height, end))
    right = max([xs[-1] + widths[-1] / 2] + [note.x + note.width for note in notes]) + MARGIN
    return Diagram(right, rows.height, tuple(lanes), tuple(arrows), tuple(notes), activations)


@dataclass(frozen=True)
class _Rows:
    """Top to bottom: where each lane's header box stands, and each message's row."""

    tops: dict[str, float]  # each lane's header box
    header_height: dict[str, float]
    wrapped: tuple[tuple[Line, ...], ...]  # each message's label, on its lines
    ys: tuple[float, ...]  # each message's row
    height: float


def _rows(sequence: Sequence, step_of: dict[str, str] | None, headers: dict, where: dict[str, float],
          right_edge: float) -> _Rows:
    """The header boxes, then each message's row (as tall as its lines), with a step's
    header boxes before its first message."""
    messages = sequence.messages
    header_height = {key: PADDING + len(lines) * LINE + PADDING / 2 for key, (lines, _, _) in headers.items()}
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
    return _Rows(tops, header_height, tuple(wrapped), tuple(ys), cursor + ROW)


def _drawn(messages: tuple[Message, ...], rows: _Rows, where: dict[str, float],
           right_edge: float) -> tuple[list[Arrow], list[Note], dict[str, list[int]]]:
    """Each message as an arrow or a note in its row, and the rows each lane is busy in."""
    arrows, notes = [], []
    busy: dict[str, list[int]] = {}
    for row, (message, lines, y) in enumerate(zip(messages, rows.wrapped, rows.ys)):
        # In the message's order, not a set's: the bars are drawn in the order lanes got
        # busy, and a set's order changes with the interpreter's hash seed.
        for key in dict.fromkeys((message.source, message.target)):
            busy.setdefault(key, []).append(row)
        if message.is_note:
            _, x, box = _note(message, where[message.source], right_edge)
            notes.append(Note(message, row, x, y - 15 - (len(lines) - 1) * LINE, box, 22 + (len(lines) - 1) * LINE,
                              lines))
            continue
        x1, x2 = where[message.source], where[message.target]
        shift = ACTIVATION / 2 if x2 > x1 else -ACTIVATION / 2  # arrows leave and meet the activation bars' edges
        arrows.append(Arrow(message, row, x1 + shift, x2 - shift, y, min(x1, x2) + ACTIVATION / 2 + 6, lines))
    return arrows, notes, busy
