"""How many scenarios may run at once on this machine's memory.

A worker with its runtime peaks at 330 MiB of resident memory in most runs and at up to
500 MiB in some (``make bench``, section 5, measures it on every run: 330–333 MiB four
times, 463 and 498 MiB twice), and a scenario holds one runtime at a time, two while a
step resumes a session a second runtime has open (``concurrent-*`` actions). ``--jobs``
is lowered to what the available memory holds, never below one, and the run says so.
CPU is not a reason to refuse more jobs: the machine only gets slower.
"""

from __future__ import annotations

from handoff.scenario import Scenario

MIB = 2**20
RUNTIME_PEAK_BYTES = 512 * MIB  # a worker and its runtime, above the highest peak measured (498 MiB)


def runtimes_at_once(scenario: Scenario) -> int:
    """The most runtimes one running scenario's slot may hold at the same time: two while a
    step resumes a session a second runtime has open, and two while a step sits out a turn
    time-out (its runtime idles on, and the slot is lent to another scenario meanwhile)."""
    concurrent = any(action.startswith("concurrent-") for step in scenario.steps for action in step.actions)
    return 2 if concurrent or any(step.waits_out_a_turn for step in scenario.steps) else 1


def bytes_per_job(scenarios: list[Scenario]) -> int:
    """What one scenario slot may need at its peak, for the hungriest scenario chosen."""
    return max((runtimes_at_once(s) for s in scenarios), default=1) * RUNTIME_PEAK_BYTES


def jobs_that_fit(requested: int, per_job: int, available_bytes: int) -> int:
    return max(1, min(requested, available_bytes // per_job))


def lowered_note(requested: int, fitting: int, per_job: int, available_bytes: int) -> str:
    return (f"note: --jobs {requested} lowered to {fitting}: {available_bytes / 2**30:.1f} GiB of memory is "
            f"available and a running scenario may need {per_job // MIB} MiB")
