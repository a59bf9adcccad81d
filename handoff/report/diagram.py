"""Where a sequence diagram's parts go on the page: pure arithmetic from its data.

Every message gets a row of its own, top to bottom in the order it happened, so no two
labels ever share a row. Lanes are spaced so that each arrow's label fits between the
two lifelines it joins; text widths are estimated from character counts (generously, so
labels never collide with an arrowhead), which keeps the layout deterministic and
testable without a browser. The template (templates/diagram.svg.j2) only draws what is
placed here.
"""

from __future__ import annotations

from dataclasses import dataclass

from handoff.report.sequence import Message, Participant, Sequence

CHARACTER = 7.0  # px per character of the 12 px labels (DejaVu Sans averages ~6.6)
TITLE_CHARACTER = 7.8  # the lane titles are bold
LINE = 15  # px per line of a lane's header
ROW = 26  # px per message
MARGIN = 14
PADDING = 10  # inside a lane's header box, each side
MIN_GAP = 56  # between two lifelines, however short their labels
ARROW_ROOM = 28  # what an arrow needs besides its label: its head and some air
ACTIVATION = 8  # the width of the bar that shows when a worker or runtime is busy
FACT_SUFFIX = " ✓"  # after a fact the model was sent (" ✗" when it was not)


@dataclass(frozen=True)
class Lane:
    participant: Participant
    x: float  # the lifeline
    width: float  # the header box
    lines: tuple[str, ...]
    line_ys: tuple[float, ...]  # the baseline of each line of the header

    @property
    def left(self) -> float:
        return self.x - self.width / 2


@dataclass(frozen=True)
class Arrow:
    message: Message
    row: int
    x1: float  # where it starts (the sender's lifeline)
    x2: float  # where its head is (the receiver's)
    y: float
    label_x: float  # the label starts here, above the line

    @property
    def rightwards(self) -> bool:
        return self.x2 >= self.x1


@dataclass(frozen=True)
class Note:
    message: Message
    row: int
    x: float
    y: float  # top of its box
    width: float
    height: float


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
    header_top: float
    header_height: float
    lanes: tuple[Lane, ...]
    arrows: tuple[Arrow, ...]
    notes: tuple[Note, ...]
    activations: tuple[Activation, ...]


def label_width(message: Message) -> float:
    """How wide a message's label is drawn: its text, then the fact and its mark."""
    characters = len(message.label)
    if message.fact is not None:
        characters += len(f" '{message.fact.value}'") + len(FACT_SUFFIX)
    return characters * CHARACTER


def _header_width(participant: Participant) -> float:
    widest = max([len(participant.title) * TITLE_CHARACTER] + [len(line) * CHARACTER for line in participant.details])
    return widest + 2 * PADDING


def _gaps(sequence: Sequence, widths: list[float]) -> list[float]:
    """The distance between each lifeline and the next: room for the headers, then for
    every arrow's label across the lanes it spans (short spans first, so a long arrow
    only widens what its shorter neighbours left too narrow)."""
    gaps = [max(MIN_GAP, (widths[i] + widths[i + 1]) / 2 + 12) for i in range(len(widths) - 1)]
    spans = []
    for message in sequence.messages:
        if message.is_note:
            continue
        a, b = sorted((sequence.index(message.source), sequence.index(message.target)))
        spans.append((b - a, a, b, label_width(message) + ARROW_ROOM))
    for _, a, b, need in sorted(spans):
        short = need - sum(gaps[a:b])
        if short > 0:
            for i in range(a, b):
                gaps[i] += short / (b - a)
    return gaps


def layout(sequence: Sequence) -> Diagram:
    widths = [_header_width(p) for p in sequence.participants]
    gaps = _gaps(sequence, widths)
    xs = [MARGIN + widths[0] / 2]
    for gap in gaps:
        xs.append(xs[-1] + gap)
    lines_in_header = max(1 + len(p.details) for p in sequence.participants)
    header_height = PADDING + lines_in_header * LINE + PADDING / 2
    first_row = MARGIN + header_height + ROW
    lanes = tuple(Lane(p, x, w, (p.title, *p.details), tuple(MARGIN + PADDING + (i + 1) * LINE - 3
                                                              for i in range(1 + len(p.details))))
                  for p, x, w in zip(sequence.participants, xs, widths))
    where = {lane.participant.key: lane.x for lane in lanes}
    arrows, notes = [], []
    busy: dict[str, list[int]] = {}
    for row, message in enumerate(sequence.messages):
        y = first_row + row * ROW
        for key in {message.source, message.target}:
            busy.setdefault(key, []).append(row)
        if message.is_note:
            x = where[message.source] + ACTIVATION
            notes.append(Note(message, row, x, y - ROW / 2 - 2, label_width(message) + 2 * PADDING, ROW - 4))
            continue
        x1, x2 = where[message.source], where[message.target]
        shift = ACTIVATION / 2 if x2 > x1 else -ACTIVATION / 2  # arrows leave and meet the activation bars' edges
        arrows.append(Arrow(message, row, x1 + shift, x2 - shift, y, min(x1, x2) + ACTIVATION / 2 + 6))
    activations = tuple(
        Activation(key, where[key] - ACTIVATION / 2, first_row + min(rows) * ROW - ROW / 2,
                   first_row + max(rows) * ROW + ROW / 4)
        for key, rows in busy.items() if key.startswith(("worker:", "runtime:")))
    right = max([xs[-1] + widths[-1] / 2] + [note.x + note.width for note in notes]) + MARGIN
    height = first_row + len(sequence.messages) * ROW
    return Diagram(right, height, MARGIN, header_height, lanes, tuple(arrows), tuple(notes), activations)
