"""Progress while a run goes on, on stderr: which scenarios run, which are done (with
their verdicts) and how many wait, and the time so far.

On a terminal it is a live display (rich) that is redrawn in place and removed when the
run ends, so stdout — the plan before, the table after — reads as one piece. Anywhere
else (a pipe, a log file, CI, `make bench`) it is one plain line per finished scenario,
so a long run says what it is doing without escape codes.

It is the coordinator's observer (handoff/coordinator/observer.py); a finished scenario's
verdicts come from the same checker that judges the whole run afterwards.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from handoff.checker.checks import judge_scenario
from handoff.fact import Fact
from handoff.printable import unescaped, visible
from handoff.protocol import Backend
from handoff.report.outcomes import Standing, in_words, standing
from handoff.runs.record import ScenarioRecord
from handoff.scenario import Scenario

LAST_DONE_SHOWN = 4  # the live view lists the most recently finished few, not all of them


class Progress:
    def __init__(self, scenarios: list[Scenario], fact: Fact, backend: Backend, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, on_start: Callable[[], None] = lambda: None):
        self.on_start = on_start  # what to say first, once the run's inputs passed their checks (the plan)
        self.total = len(scenarios)
        self.fact = fact
        self.backend = backend
        self.stream = stream or unescaped(sys.stderr)
        self.clock = clock
        self.started_at = clock()
        self.running: dict[str, float] = {}  # name -> when it started
        self.done: list[tuple[str, str, Standing]] = []  # name, its outcome in words, its standing
        self.console = Console(file=self.stream, highlight=False)
        self._live: Live | None = None

    @property
    def live(self) -> bool:
        """Redrawn in place on a terminal; plain lines anywhere else."""
        return self.console.is_terminal

    def __enter__(self) -> Progress:
        return self

    def run_started(self) -> None:
        self.on_start()
        self.started_at = self.clock()
        if self.live:
            # stdout is the table's: the live view must not capture what is printed there.
            self._live = Live(console=self.console, get_renderable=self._view, refresh_per_second=4, transient=True,
                              redirect_stdout=False, redirect_stderr=False)
            self._live.start()

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self.live and self.done:
            self.console.print(f"{len(self.done)} of {self.total} scenarios done in {self._elapsed():.1f} s")

    def scenario_started(self, scenario: Scenario) -> None:
        self.running[scenario.name] = self.clock()

    def scenario_finished(self, record: ScenarioRecord) -> None:
        self.running.pop(record.name, None)
        judged = judge_scenario(record, self.fact, self.backend)
        self.done.append((record.name, in_words(judged), standing(judged)))
        if not self.live:
            print(visible(self.line(record.name, in_words(judged), record.seconds)), file=self.stream, flush=True)

    def line(self, name: str, outcome: str, seconds: float) -> str:
        """``[ 3/28  12.4 s] cross-process: kept, as expected (3.1 s)``"""
        width = len(str(self.total))
        return f"[{len(self.done):>{width}}/{self.total} {self._elapsed():6.1f} s] {name}: {outcome} ({seconds:.1f} s)"

    def _elapsed(self) -> float:
        return self.clock() - self.started_at

    def _view(self) -> Group:
        now = self.clock()
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(overflow="ellipsis", no_wrap=True)
        running = ", ".join(f"{name} {now - since:.0f} s" for name, since in self.running.items())
        grid.add_row("running", Text(visible(running) or "—"))
        for name, outcome, state in self.done[-LAST_DONE_SHOWN:]:
            style = "red" if state in (Standing.CONTRADICTED, Standing.UNJUDGED) else ""
            grid.add_row("done", Text(visible(f"{name}: {outcome}"), style=style))
        waiting = self.total - len(self.done) - len(self.running)
        grid.add_row("so far", Text(f"{len(self.done)} of {self.total} done, {len(self.running)} running, "
                                    f"{waiting} waiting; {now - self.started_at:.0f} s"))
        return Group(grid)
