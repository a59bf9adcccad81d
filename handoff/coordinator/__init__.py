"""The coordinator: runs scenarios step by step in separate worker processes.

Split by job, each a module of its own:

* services.py — what a run shares: tracker, run directory, witness, zygote, LAN, databases;
* scheduler.py — which scenario runs when (slots, longest first);
* scenario_run.py — one scenario: its hosts (placement.py), its steps, the id passed along;
* step_driver.py — one step: a worker on a host, its spec, its events, time-outs, faults;
* specs.py — what a worker is told.

runner.py ties them together and returns the run's record (handoff/runs/record.py):
everything observed, nothing judged.
"""
