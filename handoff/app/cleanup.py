"""`handoff clean`: what runs that were killed left behind (handoff/leftovers.py), removed,
each thing said as it goes."""

from __future__ import annotations

from typing import Callable

from handoff import leftovers


def clean_up(say: Callable[[str], None], warn: Callable[[str], None]) -> bool:
    """Remove every leftover of a run that is gone; False when something could not be."""
    found = leftovers.find()
    for leftover in found:
        say(f"removing {leftover.kind} {leftover.name} ({leftover.why})")
    failed = leftovers.remove(found)
    for problem in failed:
        warn(f"could not remove {problem}")
    say(f"removed {leftovers.describe(found)}" if found else "nothing left behind by earlier runs")
    return not failed
