"""`handoff skew`: the version grid as a plan (a cell per pair of installed runtime/SDK
versions, both ways: handoff/skew/grid.py), executed and kept like any run."""

from __future__ import annotations

from pathlib import Path

from handoff import backends, inputs
from handoff.app.execute import Executed, Plan, Say, execute, ready_to_run
from handoff.app.outputs import read_by_the_tool
from handoff.coordinator.services import RunSettings
from handoff.errors import UserError
from handoff.protocol import DEFAULT_RUN_BACKEND
from handoff.skew import grid
from handoff.words import Command


GRID_BACKENDS = (backends.WITNESS, backends.WITNESS_BYOK)  # the paths a grid runs on: the witness's two


def run_grid(runtimes: list[str], sdks: list[str], fact: str, topic: str, jobs: int, runs_dir: Path,
             json_path: Path | None, note: Say, backend: str = backends.WITNESS) -> Executed:
    """Check the versions and the places to write, then run every cell of the grid, on the
    witness as the Copilot API (the lab's path) or as a BYOK provider."""
    if backend not in GRID_BACKENDS:
        raise UserError(f"--backend {backend}: choose one of {', '.join(GRID_BACKENDS)} (a grid asks the witness)")
    chosen = backends.choose(backend, None, None, None, api_model=DEFAULT_RUN_BACKEND.model)
    the_fact = inputs.fact(fact, topic)
    # The places to write first: they need nothing installed to be checked, the versions do.
    if json_path is not None:
        inputs.writable_file(json_path, "--json", keep=read_by_the_tool(runs_dir))
    inputs.writable_directory(runs_dir, "--runs-dir")
    runtimes, sdks = grid.chosen_versions(runtimes, sdks)
    cells = grid.plan(grid.pairs(runtimes, sdks))
    jobs = ready_to_run(cells, jobs, note)
    note(f"{len(cells)} cells: runtime {', '.join(runtimes)} × SDK {', '.join(sdks)}, both ways, {jobs} at a time, "
         f"on {chosen.describe()} ...")
    return execute(Plan(cells, RunSettings(fact=the_fact, jobs=jobs, backend=chosen), runs_dir, Command.SKEW))
