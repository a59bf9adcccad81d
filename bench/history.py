"""Benchmark 2: how a cold resume's cost grows with the session's history.

One builder process (``bench/history_builder.py``) makes one session per size (1, 10,
100, 200 — the long-history rung's length — and 1000 turns by default) in one home, then exits. For every repeat, that home is copied afresh (so each
resume starts from the same bytes, not from a log the previous resume appended to) and a
NEW process, ``bench/bare_sdk.py ask``, resumes the session and asks for the fact told in
turn 1. Its phase timings separate what a cold resume costs:

* *process → resume returned*: interpreter start, ``import copilot``, runtime start, and
  the ``resume_session`` call;
* *resume call alone*: ``resume_session``, where the runtime reads and replays the event
  log;
* *ask turn*: the first turn after the resume, which sends the whole replayed history.

The event log's size (bytes of ``events.jsonl`` and its number of events) is read from
the built home. Sizes are measured round-robin (1, 10, 100, 1000, 1, 10, ...) so a
disturbance on the machine does not land on one size only.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from handoff.eventlog import events_path, read_events
from handoff.fact import Fact

from bench.overhead import BARE_SCRIPT
from bench.procs import Bench, python_command
from bench.report import Section, Table
from bench.stats import Summary, fit_line, fmt

BUILD_TIMEOUT_MARGIN = 120.0
RUNG_TURNS = 200  # the long-history rung's length: its resume's cost is a finding of its own


@dataclass
class Built:
    size: int
    turns: int
    session_id: str
    build_ms: float
    first_turn_ms: float
    last_turns_ms: float
    capped: bool
    log_bytes: int = 0
    log_events: int = 0
    top_types: str = ""


@dataclass
class Resumes:
    to_resumed: list[float] = field(default_factory=list)
    resume: list[float] = field(default_factory=list)
    before_resume: list[float] = field(default_factory=list)
    ask: list[float] = field(default_factory=list)
    kept: list[bool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


async def _build(bench: Bench, home: Path, sizes: list[int], deadline: float, fact: Fact) -> tuple[list[Built], float, str]:
    witness = await bench.witness()
    done = await bench.run(*python_command("-m", "bench.history_builder", "--home", str(home), "--witness", witness,
                                           "--runtime", str(bench.runtime_path), "--sizes", ",".join(map(str, sizes)),
                                           "--deadline", str(deadline), "--fact", fact.value, "--topic", fact.topic),
                           timeout=deadline + BUILD_TIMEOUT_MARGIN)
    built = [Built(**json.loads(line)) for line in done.stdout.splitlines() if line.startswith("{")]
    problem = "" if done.exit_code == 0 else f"builder exited {done.exit_code}: {done.stderr_tail.strip()[-300:]}"
    for item in built:
        path = events_path(home, item.session_id)
        item.log_bytes = path.stat().st_size
        events, _ = read_events(path)
        item.log_events = len(events)
        common = Counter(e.get("type") for e in events).most_common(3)
        item.top_types = ", ".join(f"{kind} {count}" for kind, count in common)
    return built, done.wall_ms, problem


async def _cold_resume(bench: Bench, pristine: Path, item: Built, fact: Fact, into: Resumes) -> None:
    home = bench.new_dir("resume-home")
    shutil.copytree(pristine, home, dirs_exist_ok=True)
    witness = await bench.witness()
    args = python_command(str(BARE_SCRIPT), "ask", "--home", str(home), "--session-id", item.session_id,
                          "--witness", witness, "--runtime", str(bench.runtime_path),
                          "--fact", fact.value, "--topic", fact.topic)
    done = await bench.run(*args, "--spawned-at", repr(time.monotonic()))
    shutil.rmtree(home, ignore_errors=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.exit_code != 0 or not lines:
        into.problems.append(f"{item.turns} turns: resume process exited {done.exit_code}: {done.stderr_tail.strip()[-200:]}")
        return
    result = json.loads(lines[-1])
    phases = result["phases_ms"]
    before = phases["process_start"] + phases["sdk_import"] + phases["runtime_start"]
    into.before_resume.append(before)
    into.resume.append(phases["open"])
    into.to_resumed.append(before + phases["open"])
    into.ask.append(phases["turn"])
    into.kept.append(bool(result["kept"]))
    if not result["kept"]:
        into.problems.append(f"{item.turns} turns: the answer {result['answer']!r} does not name the fact")


async def run(bench: Bench, sizes: list[int], repeats: int, build_deadline: float) -> Section:
    fact = Fact()
    section = Section("history", "2. Cold resume cost vs history length", method=__doc__.split("\n", 2)[2].strip())
    pristine = bench.new_dir("history-home")
    built, build_wall, problem = await _build(bench, pristine, sizes, build_deadline, fact)
    if problem:
        section.problems.append(problem)
    for item in built:
        if item.capped:
            section.findings.append(
                f"The {item.size}-turn session was capped at {item.turns} turns: the build passed its "
                f"{build_deadline:.0f} s deadline (raise it with --history-deadline)")
    missing = [size for size in sizes if size not in {b.size for b in built}]
    if missing:
        section.findings.append(f"Not built (the build deadline came first): {', '.join(map(str, missing))} turns")
    results = {item.size: Resumes() for item in built}
    for _ in range(repeats):
        for item in built:
            await _cold_resume(bench, pristine, item, fact, results[item.size])

    section.tables.append(Table(
        ["turns", "build, s", "turn 1, ms", "last 10% of turns, ms/turn", "events.jsonl", "events", "most frequent events"],
        [[str(b.turns), f"{b.build_ms / 1000:.1f}", f"{b.first_turn_ms:.0f}", f"{b.last_turns_ms:.0f}",
          f"{b.log_bytes / 1024:.0f} KiB", str(b.log_events), b.top_types] for b in built],
        caption=f"Building the histories (one process, {build_wall / 1000:.0f} s in all)"))
    rows = []
    for item in built:
        r = results[item.size]
        rows.append([str(item.turns), fmt(Summary.of(r.to_resumed)), fmt(Summary.of(r.before_resume)),
                     fmt(Summary.of(r.resume)), fmt(Summary.of(r.ask)), f"{sum(r.kept)}/{len(r.kept)}"])
        section.problems.extend(r.problems)
    section.tables.append(Table(
        ["turns", "process → resume returned, ms", "of which start + import + runtime, ms", "resume call, ms",
         "ask turn after resume, ms", "fact kept"], rows,
        caption=f"Cold resume in a new process: median (min–max) of {repeats} repeats"))
    section.findings.extend(_findings(built, results))
    return section


def _rung(built: list[Built], results: dict[int, Resumes]) -> list[str]:
    """What the long-history rung's resume costs (scenarios/long-history-200-turns.toml:
    200 turns, the fact in turn 1, resumed in a new process), when its length was built."""
    item = next((b for b in built if b.turns == RUNG_TURNS), None)
    if item is None:
        return []
    r = results[item.size]
    to_resumed, resume, ask = Summary.of(r.to_resumed), Summary.of(r.resume), Summary.of(r.ask)
    if to_resumed is None or resume is None or ask is None:
        return []
    return [f"The long-history rung's length ({RUNG_TURNS} turns, `long-history-200-turns`): a cold resume in a new "
            f"process took {to_resumed.median:.0f} ms from process start to resumed, of which the resume call "
            f"{resume.median:.0f} ms, and the ask after it {ask.median:.0f} ms (medians of {len(r.resume)}; fact kept "
            f"{sum(r.kept)}/{len(r.kept)}); building those {RUNG_TURNS} turns in one process took "
            f"{item.build_ms / 1000:.1f} s."]


def _findings(built: list[Built], results: dict[int, Resumes]) -> list[str]:
    points = [(b, Summary.of(results[b.size].resume), Summary.of(results[b.size].before_resume),
               Summary.of(results[b.size].ask)) for b in built]
    points = [p for p in points if p[1] is not None]
    if len(points) < 2:
        return []
    findings = _rung(built, results)
    turns = [float(b.turns) for b, *_ in points]
    resume_fit = fit_line(turns, [r.median for _, r, _, _ in points])
    log_fit = fit_line(turns, [float(b.log_bytes) for b, *_ in points])
    ask_fit = fit_line(turns, [a.median for *_, a in points])
    if resume_fit:
        findings.append(
            f"Resume call vs turns, least-squares line: {resume_fit.intercept:.0f} ms {resume_fit.slope * 100:+.1f} ms "
            f"per 100 turns (r² = {resume_fit.r_squared:.3f}); the ask turn after it: {ask_fit.intercept:.0f} ms "
            f"{ask_fit.slope * 100:+.1f} ms per 100 turns (r² = {ask_fit.r_squared:.3f}).")
    if log_fit:
        findings.append(f"The event log grows by {log_fit.slope / 1024:.2f} KiB per turn (r² = {log_fit.r_squared:.4f}); "
                        f"{points[-1][0].log_events / max(1, points[-1][0].turns):.1f} events per turn at "
                        f"{points[-1][0].turns} turns.")
    steps = []
    for (b1, r1, *_), (b2, r2, *_) in zip(points, points[1:]):
        added, extra = r2.median - r1.median, b2.turns - b1.turns
        per_100 = f" ({added / extra * 100:+.1f} per 100 turns)" if extra >= 90 else ""
        steps.append(f"{b1.turns}→{b2.turns} turns: {added:+.0f} ms{per_100}")
    findings.append("Linearity check, what the resume call gains between neighbouring sizes (on a straight line the "
                    "per-100-turn figures would be equal; differences of a few ms are within the noise): "
                    + "; ".join(steps) + ".")
    small, large = points[0], points[-1]
    if large[0].turns > small[0].turns:
        growth = large[1].median / max(small[1].median, 1e-9)
        starts = sorted((small[2].median, large[2].median))
        share = large[1].median / (large[1].median + large[2].median) * 100
        findings.append(
            f"From {small[0].turns} to {large[0].turns} turns ({large[0].turns / small[0].turns:.0f}× the turns) the resume "
            f"call goes from {small[1].median:.0f} to {large[1].median:.0f} ms ({growth:.1f}×), while process start + "
            f"`import copilot` + runtime start stays between {starts[0]:.0f} and {starts[1]:.0f} ms. At "
            f"{large[0].turns} turns the runtime's replay is {share:.0f}% of the time from process start to resumed: "
            + ("starting the process and the runtime, not replaying the log, dominates a cold resume at every size measured."
               if large[1].median < large[2].median else
               "the replay now costs more than starting the process and runtime."))
    longest = built[-1]
    if len(built) >= 2 and longest.turns >= 10:
        grows = longest.last_turns_ms > 1.5 * longest.first_turn_ms
        findings.append(
            ("Building is not linear: each turn sends the whole history, so a turn"
             if grows else "A turn's cost stays nearly flat while building: a turn")
            + f" took {longest.first_turn_ms:.0f} ms at the start of the {longest.turns}-turn session and "
            f"{longest.last_turns_ms:.0f} ms over its last 10%; its {longest.turns} turns took {longest.build_ms / 1000:.0f} s.")
    return findings
