"""Benchmark 1: what the tool costs on top of the bare SDK, for one cross-process handoff.

**Tool**: ``handoff run cross-process --jobs 1 --json FILE`` as a subprocess. A subprocess
rather than ``handoff.runner.run`` in this process, because it measures what a user
waits for: interpreter start, the CLI's imports, loading the scenario, starting the
witness model, the two worker processes, judging, the report and the cleanup. An
in-process call would also share this process's warm imports and could not be compared
with two cold bare processes. The coordinator's own time for the scenario (from the JSON)
is shown beside it, which is close to what an in-process call would cost.

**Baseline**: ``bench/bare_sdk.py`` twice, as two new processes (A: create with an id,
tell, close, exit; B: resume the same id from the same home, ask, close, exit) against
a witness started once beforehand — an app that already has its model endpoint. The
tool starts its own witness each run; that cost is the tool's.

Tool and baseline alternate in the same run (A-B, B-A, A-B, ...: neither always goes
first), and the ratio is taken per pair, then its median reported. A run counts only if
the fact was kept (tool: exit code 0 and verdict ``kept``; bare: the answer names it).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from handoff.checker.checks import judge
from handoff.words import Verdict
from handoff.fact import Fact
from handoff.protocol import ActionDone, Finished, Ready, Turn
from handoff.runs.record import ScenarioRecord

from bench.procs import Bench, handoff_command, python_command, run_record
from bench.report import Section, Table
from bench.stats import Summary, fmt, ratios

BARE_SCRIPT = Path(__file__).with_name("bare_sdk.py")
BARE_PHASES = ("process_start", "sdk_import", "runtime_start", "open", "turn", "close", "teardown", "exit")


@dataclass
class BareRun:
    wall_ms: float
    ok: bool
    phases: dict[str, dict[str, float]] = field(default_factory=dict)  # side -> phase -> ms
    problem: str = ""


@dataclass
class ToolRun:
    wall_ms: float
    ok: bool
    scenario_ms: float | None = None
    phases: dict[str, float] = field(default_factory=dict)  # derived from the worker events
    problem: str = ""


async def _bare_side(bench: Bench, mode: str, home: Path, session_id: str, witness: str, fact: Fact) -> tuple[dict, float, str]:
    args = python_command(str(BARE_SCRIPT), mode, "--home", str(home), "--session-id", session_id,
                          "--witness", witness, "--runtime", str(bench.runtime_path),
                          "--fact", fact.value, "--topic", fact.topic)
    done = await bench.run(*args, "--spawned-at", repr(time.monotonic()))
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.exit_code != 0 or not lines:
        return {}, done.wall_ms, f"bare {mode} exited {done.exit_code}: {done.stderr_tail.strip()[-300:]}"
    result = json.loads(lines[-1])
    phases = result["phases_ms"]
    phases["exit"] = max(0.0, done.wall_ms - sum(phases.values()))  # interpreter shutdown, seen from outside
    result["wall_ms"] = done.wall_ms
    return result, done.wall_ms, ""


async def bare_handoff(bench: Bench, witness: str, fact: Fact) -> BareRun:
    home = bench.new_dir("bare-home")
    session_id = f"bare-{uuid.uuid4().hex[:16]}"
    told, wall_a, problem = await _bare_side(bench, "tell", home, session_id, witness, fact)
    if problem:
        return BareRun(wall_a, False, problem=problem)
    asked, wall_b, problem = await _bare_side(bench, "ask", home, session_id, witness, fact)
    if problem:
        return BareRun(wall_a + wall_b, False, problem=problem)
    ok = told.get("answer") == "OK" and bool(asked.get("kept"))
    return BareRun(wall_a + wall_b, ok, {"A": told["phases_ms"], "B": asked["phases_ms"]},
                   "" if ok else f"bare: answer {asked.get('answer')!r} does not name the fact")


def tool_phases(result: ScenarioRecord, spawned_wall: float, exited_wall: float) -> dict[str, float]:
    """Split a `handoff run cross-process` into phases from its workers' events.

    Every event carries ``t`` (the worker's wall clock when it was written); ``ready``
    carries ``runtime_start_ms`` and the actions and turns their own ``ms``. What the
    events cannot separate is named as a gap between two known instants."""
    steps = {s.step: s.view() for s in result.steps}
    phases: dict[str, float] = {}

    def events(step: str, kind: type, action: str | None = None):
        for event in steps[step].events:
            if isinstance(event, kind) and (action is None or event.action == action):
                return event
        raise KeyError(f"step {step} has no {kind.__name__} {action or ''}")

    for step, opening in (("A", "create"), ("B", "resume")):
        ready = events(step, Ready)
        phases[f"{step}.runtime_start"] = ready.runtime_start_ms
        phases[f"{step}.open"] = events(step, ActionDone, opening).ms
        phases[f"{step}.turn"] = events(step, Turn).ms
        close = events(step, ActionDone, "close")
        phases[f"{step}.close"] = close.ms
        phases[f"{step}.teardown"] = (events(step, Finished).t - close.t) * 1000
        phases[f"{step}.runtime_begins"] = ready.t - ready.runtime_start_ms / 1000
    # B: from A's last line to B's runtime start: worker exit, a new process, its imports.
    phases["B.before_runtime"] = (phases["B.runtime_begins"] - events("A", Finished).t) * 1000
    phases["cli_until_A_runtime"] = (phases.pop("A.runtime_begins") - spawned_wall) * 1000
    phases.pop("B.runtime_begins")
    phases["after_B"] = (exited_wall - events("B", Finished).t) * 1000
    return phases


async def tool_handoff(bench: Bench, fact: Fact) -> ToolRun:
    json_path = bench.new_dir("tool") / "run.json"
    done = await bench.run(*handoff_command("run", "cross-process", "--jobs", "1", "--json", str(json_path),
                                            "--runs-dir", str(bench.runs_dir), "--fact", fact.value,
                                            "--topic", fact.topic), graceful=True)
    exited_wall = done.spawned_wall + done.wall_ms / 1000
    if done.exit_code != 0 or not json_path.exists():
        return ToolRun(done.wall_ms, False, problem=f"handoff run exited {done.exit_code}: {done.stderr_tail.strip()[-300:]}")
    record = run_record(json_path)
    if record is None:
        return ToolRun(done.wall_ms, False, problem=f"handoff run wrote no readable record to {json_path}")
    result = record.scenarios[0]
    kept = any(turn.verdict == Verdict.KEPT for turn in judge(record).turns if turn.kind == "ask")
    try:
        phases = tool_phases(result, done.spawned_wall, exited_wall)
    except KeyError as error:
        return ToolRun(done.wall_ms, False, problem=f"handoff run: events incomplete ({error})")
    return ToolRun(done.wall_ms, kept, result.seconds * 1000, phases,
                   "" if kept else "handoff run: the ask turn was not judged kept")


def _median(runs, getter) -> Summary | None:
    return Summary.of(getter(r) for r in runs)


async def run(bench: Bench, pairs: int, warmup: bool) -> Section:
    fact = Fact()
    witness = await bench.witness()
    section = Section("overhead", "1. Overhead of the tool vs the bare SDK (one cross-process handoff)",
                      method=__doc__.split("\n", 2)[2].strip())
    if warmup:  # first runs pay for cold caches (page cache, the runtime's unpacking); not counted
        await tool_handoff(bench, fact)
        await bare_handoff(bench, witness, fact)
    tools: list[ToolRun] = []
    bares: list[BareRun] = []
    for pair in range(pairs):
        order = ("tool", "bare") if pair % 2 == 0 else ("bare", "tool")
        for which in order:
            if which == "tool":
                tools.append(await tool_handoff(bench, fact))
            else:
                bares.append(await bare_handoff(bench, witness, fact))
    for label, runs in (("tool", tools), ("bare", bares)):
        for number, item in enumerate(runs, 1):
            if not item.ok:
                section.problems.append(f"{label} run {number} does not count: {item.problem}")
    good_pairs = [(t, b) for t, b in zip(tools, bares) if t.ok and b.ok]
    good_tools = [t for t in tools if t.ok]
    good_bares = [b for b in bares if b.ok]
    pair_ratios = ratios([t.wall_ms for t, _ in good_pairs], [b.wall_ms for _, b in good_pairs])
    ratio = Summary.of(pair_ratios)
    tool_wall, bare_wall = _median(good_tools, lambda r: r.wall_ms), _median(good_bares, lambda r: r.wall_ms)
    section.tables.append(Table(
        ["", "runs counted", "wall time, ms: median (min–max)"],
        [["tool: `handoff run cross-process --jobs 1`", f"{len(good_tools)}/{len(tools)}", fmt(tool_wall)],
         ["  of which the coordinator's scenario time", "", fmt(_median(good_tools, lambda r: r.scenario_ms))],
         ["bare SDK: bare_sdk.py tell + ask", f"{len(good_bares)}/{len(bares)}", fmt(bare_wall)],
         ["ratio tool / bare, per pair", f"{len(pair_ratios)} pairs", fmt(ratio, "×", 2)]],
        caption="Wall time of one handoff (process A tells, process B resumes and asks)"))

    def bare(side: str, *names: str):
        return _median(good_bares, lambda r: sum(r.phases[side][n] for n in names))

    def tool(*names: str):
        return _median(good_tools, lambda r: sum(r.phases[n] for n in names))

    rows = [
        ["CLI start, imports, witness + zygote start, worker A fork", "—", fmt(tool("cli_until_A_runtime"))],
        ["A: process start (interpreter until first line)", fmt(bare("A", "process_start")), "(in the row above)"],
        ["A: `import copilot`", fmt(bare("A", "sdk_import")), "(in the row above)"],
        ["A: runtime start", fmt(bare("A", "runtime_start")), fmt(tool("A.runtime_start"))],
        ["A: create_session", fmt(bare("A", "open")), fmt(tool("A.open"))],
        ["A: turn (tell)", fmt(bare("A", "turn")), fmt(tool("A.turn"))],
        ["A: close (disconnect)", fmt(bare("A", "close")), fmt(tool("A.close"))],
        ["A: teardown (client.stop; tool: + event-log read)", fmt(bare("A", "teardown")), fmt(tool("A.teardown"))],
        ["A: interpreter exit (bare) / B fork from the zygote (tool)", fmt(bare("A", "exit")), "(next row)"],
        ["B: process start + `import copilot` (tool: from A's last event to B's runtime start)", fmt(bare("B", "process_start", "sdk_import")), fmt(tool("B.before_runtime"))],
        ["B: runtime start", fmt(bare("B", "runtime_start")), fmt(tool("B.runtime_start"))],
        ["B: resume_session", fmt(bare("B", "open")), fmt(tool("B.open"))],
        ["B: turn (ask)", fmt(bare("B", "turn")), fmt(tool("B.turn"))],
        ["B: close (disconnect)", fmt(bare("B", "close")), fmt(tool("B.close"))],
        ["B: teardown", fmt(bare("B", "teardown")), fmt(tool("B.teardown"))],
        ["after B: exit (bare) / judging, report, cleanup, exit (tool)", fmt(bare("B", "exit")), fmt(tool("after_B"))],
    ]
    section.tables.append(Table(["phase", "bare SDK, ms", "tool, ms"], rows,
                                caption="Where the time goes, per phase: median (min–max) over the counted runs"))
    if ratio and tool_wall and bare_wall:
        extra = tool_wall.median - bare_wall.median
        fixed = Summary.of(r.phases["cli_until_A_runtime"] + r.phases["after_B"] for r in good_tools)
        inside = ("runtime_start", "open", "turn", "close", "teardown")
        bare_inside = Summary.of(sum(r.phases[side][n] for side in "AB" for n in inside) for r in good_bares)
        tool_inside = Summary.of(sum(r.phases[f"{side}.{n}"] for side in "AB" for n in inside) for r in good_tools)
        bare_outside = Summary.of(r.wall_ms - sum(r.phases[side][n] for side in "AB" for n in inside) for r in good_bares)
        bare_b_start = bare("B", "process_start", "sdk_import")
        tool_b_start = tool("B.before_runtime")
        section.findings.append(
            f"The tool takes {ratio.median:.2f}× the bare SDK's time for the same handoff "
            f"(median of {len(pair_ratios)} pair ratios), {abs(extra):.0f} ms {'more' if extra >= 0 else 'less'} "
            f"(difference of the medians).")
        section.findings.append(
            f"Inside the two processes (runtime start, create/resume, turn, close, teardown, summed over A and B): "
            f"bare {bare_inside.median:.0f} ms, tool {tool_inside.median:.0f} ms. Outside them: the bare script spends "
            f"{bare_outside.median:.0f} ms starting, importing and exiting two interpreters; the tool spends "
            f"{fixed.median:.0f} ms before A's runtime starts and after B ends (CLI interpreter and imports, witness "
            f"start, worker A's start and imports, judging, report, cleanup) plus {tool_b_start.median:.0f} ms from A's "
            f"last event to B's runtime start (bare: {bare_b_start.median:.0f} ms for B's start and `import copilot`).")
    return section
