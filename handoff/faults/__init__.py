"""Faults as data: what the step driver does to a step, where, and when it heals (the nemesis).

A scenario states its faults (``[[steps.faults]]``, checked against kinds.py); each kind
is one small class with ``inject`` and, for faults that end, ``heal`` (base.py says what a
fault is; logs.py, machines.py and processes.py hold the kinds; catalogue.py finds a
plan's). The step driver (handoff/coordinator/step_driver.py) injects them at its fault
points — before the step, while the model answers turn N, after turn N, inside turn N's
write to the store — and heals them after their delay or when the step ends; whatever is still unhealed when a
scenario ends (also on a crash or an interrupt) is healed then. Every injection and heal
is recorded with its time in the run record.

A fault that could not do what it says raises :class:`FaultDidNotApply`, which ends the
scenario as *crashed*: a fault that did not happen must never pass as if it had.
"""
