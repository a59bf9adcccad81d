"""`handoff clean`: what runs that were killed left behind (handoff/leftovers.py), removed,
each thing said as it goes; with ``--dry-run`` only said, beside what is left alone."""

from __future__ import annotations

from typing import Callable

from handoff import leftovers


def clean_up(say: Callable[[str], None], warn: Callable[[str], None], dry_run: bool = False) -> bool:
    """Remove every leftover of a run that is gone; False when something could not be."""
    found = leftovers.find(forget_emptied=not dry_run)
    for leftover in found:
        say(f"{'would remove' if dry_run else 'removing'} {leftover.kind} {leftover.name} ({leftover.why})")
    if dry_run:
        for thing in leftovers.left_alone():
            say(f"leaving alone {thing.kind} {thing.name}: {thing.why}")
        say(f"would remove {leftovers.describe(found)}" if found else "nothing left behind by earlier runs")
        return True
    failed = leftovers.remove(found)
    for problem in failed:
        warn(f"could not remove {problem}")
    say(f"removed {leftovers.describe(found)}" if found else "nothing left behind by earlier runs")
    return not failed
