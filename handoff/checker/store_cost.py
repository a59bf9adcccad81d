"""Whether a long history's cost to its store stayed flat as the log grew.

A worker filling a session through a database store counts, after each filler turn, the
bytes the session files were given in it and the bytes the database paid for them
(``ActionDone.store_given`` / ``store_written``, counted as ``store_written_is`` says).
A store whose append rewrites the log pays more a byte given the longer the log is; one
that adds only what is appended pays the same at the end as at the start. The first and
the last third of the filler turns are compared, each summed (a database pays in pages,
not evenly turn by turn). The first filler turn is left out: it also carries what the
session writes once, whenever the runtime gets to it (its system message, 22 KB, came
with the tell in one run and with the first filler turn in the next, and a window with
eight times the bytes given but not eight times the pages written read as "grows").
"""

from __future__ import annotations

from dataclasses import dataclass

from handoff.protocol import ActionDone
from handoff.words import Action

FLAT_WITHIN = 1.25  # the last third's bytes paid a byte given, against the first third's
THIRDS = 3
SKIPPED = 1  # the first filler turn: see above


@dataclass(frozen=True)
class Window:
    first_turn: int  # filler turns, numbered from 1
    last_turn: int
    given: int
    written: int

    @property
    def per_byte(self) -> float | None:
        return self.written / self.given if self.given else None


@dataclass(frozen=True)
class CostGrowth:
    early: Window
    late: Window
    written_is: str

    @property
    def growth(self) -> float | None:
        """The late window's bytes paid a byte given, as a multiple of the early one's."""
        early, late = self.early.per_byte, self.late.per_byte
        return late / early if early and late is not None else None

    @property
    def flat(self) -> bool | None:
        growth = self.growth
        return None if growth is None else growth <= FLAT_WITHIN

    def words(self) -> str:
        """E.g. "store cost per turn flat (1.02x): 6.1 B paid a byte given in filler turns
        1–50, 6.2 B in 150–199"."""
        state = {None: "not told", True: "flat", False: "grows"}[self.flat]
        growth = f" ({self.growth:.2f}x)" if self.growth is not None else ""
        return (f"store cost per turn {state}{growth}: {_per_byte(self.early)} paid a byte given in filler turns "
                f"{self.early.first_turn}–{self.early.last_turn}, {_per_byte(self.late)} in "
                f"{self.late.first_turn}–{self.late.last_turn}")


def _per_byte(window: Window) -> str:
    return "nothing given" if window.per_byte is None else f"{window.per_byte:.1f} B"


def cost_growth(actions: tuple[ActionDone, ...] | list[ActionDone]) -> CostGrowth | None:
    """The first and last third of a fill's turns after its first, from its counts; None
    when the step filled without counting (a home, a count that failed) or too few turns
    to have thirds."""
    fill = next((a for a in actions if a.action == Action.FILL and a.store_given and a.store_written), None)
    if fill is None or len(fill.store_given) != len(fill.store_written) or len(fill.store_given) < SKIPPED + THIRDS:
        return None
    turns = len(fill.store_given)
    size = (turns - SKIPPED) // THIRDS

    def window(start: int) -> Window:
        return Window(start + 1, start + size, sum(fill.store_given[start:start + size]),
                      sum(fill.store_written[start:start + size]))

    return CostGrowth(window(SKIPPED), window(turns - size), fill.store_written_is or "")
