"""Benchmark 9: the runtime's own settings, one at a time: what a runtime costs, and which
settings change that without changing what a handoff shows.

Each setting is one change to how the bare SDK starts the runtime or opens its session
(``bench/bare_sdk.py --client-options / --session-options``, or one more environment
variable), everything else as the SDK's defaults. One round runs one cross-process
handoff per setting (process A creates and tells, a new process B resumes the same id
from the same home and asks), the settings in a new order each round (rotated, so none
always runs first or after the same neighbour); every setting runs once per round, in
one run of the benchmark. A round's handoffs run as many at a time as the machine has
cores, so that seven rounds of ten settings fit in a few minutes: each handoff shares the
machine with others like it, every setting under the same load (what is compared is CPU
seconds, which each process counts for itself, and evidence, which load does not change;
the phase times in milliseconds are those of a loaded machine). One handoff with the
defaults first warms the machine's caches and is not counted (the quick pass skips it,
and runs only a few settings).

Per handoff: the runtime's start (``CopilotClient.start()``, A and B), A's create and
first turn, B's resume and ask turn, and the CPU seconds of both runtimes (each bare
process reads its reaped runtime's rusage). For the default, the runtime's CPU by thread
name, read from /proc just before ``stop()`` (threads that ended earlier and the runtime's
own children are the rest).

*Same evidence* means that, in every round, the handoff shows exactly what the default
shows in that round: B's answer names the fact; the witness's record of every request of
A and B (step, number of conversation messages, whether the fact was among them, the kind
of reply) is the same list; and the session's event log holds the same number of events
of each type. A setting that changes any of these changes what a scenario proves and is
not adopted, whatever it saves. A setting *saves* CPU only when every one of its handoffs
used less runtime CPU than every handoff with the defaults, over at least 5 rounds (the
quick pass runs 1: it shows the numbers and decides nothing).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from handoff.fact import Fact
from handoff.witness.evidence import read_evidence

from bench.machine import cores
from bench.procs import PROJECT_ROOT, Bench, python_command
from bench.report import Section, Table
from bench.stats import Summary, fmt

BARE_SCRIPT = PROJECT_ROOT / "bench" / "bare_sdk.py"
MIN_ROUNDS = 5  # fewer (--quick) show the numbers but decide nothing


@dataclass(frozen=True)
class Setting:
    name: str
    why: str  # what the setting changes, in a few words
    client: dict = field(default_factory=dict)  # CopilotClient keywords
    session: dict = field(default_factory=dict)  # create_session / resume_session keywords
    env: dict = field(default_factory=dict)  # more environment for the process (the runtime inherits it)


DEFAULT = Setting("default", "the SDK's defaults (log level info)")
SETTINGS = (
    DEFAULT,
    Setting("log level none", "the runtime writes no log file", client={"log_level": "none"}),
    Setting("log level error", "only errors in the runtime's log", client={"log_level": "error"}),
    Setting("no tools", "available_tools=[]: no tool definitions in the session", session={"available_tools": []}),
    Setting("short system message", "system_message replaced by one sentence",
            session={"system_message": {"mode": "replace", "content": "You are a helpful assistant."}}),
    Setting("skills off", "enable_skills=False", session={"enable_skills": False}),
    Setting("no discovery", "enable_config_discovery=False, skip_custom_instructions=True",
            session={"enable_config_discovery": False, "skip_custom_instructions": True}),
    Setting("infinite sessions off", "infinite_sessions={'enabled': False}: no compaction or workspace",
            session={"infinite_sessions": {"enabled": False}}),
    Setting("session telemetry off", "enable_session_telemetry=False", session={"enable_session_telemetry": False}),
    Setting("COPILOT_OFFLINE=1", "the runtime's offline switch (environment)", env={"COPILOT_OFFLINE": "1"}),
)

QUICK = ("default", "log level none", "no tools")  # the quick pass: a look at the numbers, no verdicts


def named(names: list[str]) -> tuple[Setting, ...]:
    """The settings of those names, the default always among them (the others are judged against it)."""
    return tuple(s for s in SETTINGS if s is DEFAULT or s.name in names)


@dataclass
class Trial:
    """One handoff with one setting."""

    setting: Setting
    a: dict = field(default_factory=dict)  # bare_sdk.py's JSON line for A
    b: dict = field(default_factory=dict)
    evidence: tuple = ()
    problem: str = ""

    @property
    def kept(self) -> bool:
        return not self.problem and bool(self.b.get("kept"))

    def phase(self, side: str, name: str) -> float | None:
        return getattr(self, side).get("phases_ms", {}).get(name)

    @property
    def cpu_s(self) -> float | None:
        if self.problem:
            return None
        return self.a.get("runtime_cpu_s", 0.0) + self.b.get("runtime_cpu_s", 0.0)


async def _side(bench: Bench, setting: Setting, mode: str, home: Path, session_id: str, label: str,
                fact: Fact) -> tuple[dict, str]:
    witness = await bench.witness()
    args = python_command(str(BARE_SCRIPT), mode, "--home", str(home), "--session-id", session_id,
                          "--witness", witness, "--runtime", str(bench.runtime_path), "--fact", fact.value,
                          "--topic", fact.topic, "--label", label,
                          "--client-options", json.dumps(setting.client),
                          "--session-options", json.dumps(setting.session))
    env = None
    if setting.env:
        from handoff.hosts.base import worker_env

        env = {**worker_env(), **setting.env}
    done = await bench.run(*args, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.exit_code != 0 or not lines:
        return {}, f"{setting.name}: {mode} exited {done.exit_code}: {done.stderr_tail.strip()[-300:]}"
    return json.loads(lines[-1]), ""


def _event_types(home: Path, session_id: str) -> tuple:
    log = home / "session-state" / session_id / "events.jsonl"
    if not log.exists():
        return ()
    counts = Counter(json.loads(line).get("type") for line in log.read_text().splitlines() if line.strip())
    return tuple(sorted(counts.items()))


async def trial(bench: Bench, setting: Setting, number: int) -> Trial:
    home = bench.new_dir("settings-home")
    session_id = f"settings-{uuid.uuid4().hex[:16]}"
    label = f"settings-{number:03d}"
    fact = Fact()
    result = Trial(setting)
    result.a, result.problem = await _side(bench, setting, "tell", home, session_id, label, fact)
    if not result.problem:
        result.b, result.problem = await _side(bench, setting, "ask", home, session_id, label, fact)
    requests = tuple((e.step, e.messages_received, e.fact_sent, e.reply_kind)
                     for e in read_evidence(bench.witness_evidence) if e.scenario == label)
    result.evidence = (bool(result.b.get("kept")), requests, _event_types(home, session_id))
    return result


async def run(bench: Bench, rounds: int, chosen: tuple[Setting, ...] = SETTINGS, warmup: bool = True) -> Section:
    section = Section("settings", "9. Runtime settings: what a runtime costs, and what changes that",
                      method=__doc__.split("\n", 3)[3].strip() + f"\n\nRounds: {rounds}.")
    trials: dict[str, list[Trial]] = {s.name: [] for s in chosen}
    same: dict[str, list[bool]] = {s.name: [] for s in chosen}
    cpu_vs_default: dict[str, list[float]] = {s.name: [] for s in chosen}
    if warmup:  # not counted: the first runtime of a run pays for cold caches
        await trial(bench, DEFAULT, 0)
    at_once = asyncio.Semaphore(cores())

    async def bounded(setting: Setting, number: int) -> Trial:
        async with at_once:
            return await trial(bench, setting, number)

    for round_number in range(rounds):
        shift = round_number % len(chosen)
        order = chosen[shift:] + chosen[:shift]
        first = round_number * len(chosen) + 1
        results = await asyncio.gather(*(bounded(setting, first + i) for i, setting in enumerate(order)))
        done: dict[str, Trial] = {result.setting.name: result for result in results}
        for result in results:
            if result.problem:
                section.problems.append(f"round {round_number + 1}: {result.problem}")
        base = done[DEFAULT.name]
        for name, result in done.items():
            trials[name].append(result)
            same[name].append(result.kept and base.kept and result.evidence == base.evidence)
            if result.cpu_s and base.cpu_s:
                cpu_vs_default[name].append(result.cpu_s / base.cpu_s)
    rows = []
    for setting in chosen:
        got = trials[setting.name]

        def cell(side: str, phase: str, runs=got) -> str:
            return fmt(Summary.of(t.phase(side, phase) for t in runs if not t.problem))

        starts = [t.phase(side, "runtime_start") for t in got if not t.problem for side in ("a", "b")]
        verdict = "same" if same[setting.name] and all(same[setting.name]) else \
            f"DIFFERENT in {same[setting.name].count(False)}/{len(got)}"
        rows.append([setting.name, setting.why, f"{sum(t.kept for t in got)}/{len(got)}", fmt(Summary.of(starts)),
                     cell("a", "open"), cell("a", "turn"), cell("b", "open"), cell("b", "turn"),
                     fmt(Summary.of(t.cpu_s for t in got), digits=2),
                     fmt(Summary.of(cpu_vs_default[setting.name]), "×", digits=2), verdict])
    section.tables.append(Table(
        ["setting", "what it changes", "kept", "runtime start, ms (A and B)", "create, ms", "first turn, ms",
         "resume, ms", "ask turn, ms", "runtime CPU per handoff, s", "CPU vs default, per round",
         "evidence vs default"], rows,
        caption="One cross-process handoff per setting per round (bare SDK): median (min–max)"))
    threads = Counter()
    default_runs = [t for t in trials[DEFAULT.name] if not t.problem]
    for t in default_runs:
        for side in (t.a, t.b):
            threads.update(side.get("runtime_threads_s", {}))
    if default_runs:
        sides = 2 * len(default_runs)
        total = sum(t.cpu_s for t in default_runs) / sides
        named = {name: seconds / sides for name, seconds in threads.items() if seconds / sides >= 0.005}
        listed = sorted(named.items(), key=lambda item: -item[1])
        rows = [[name, f"{seconds:.2f}", f"{seconds / total:.0%}"] for name, seconds in listed]
        rest = total - sum(named.values())
        rows.append(["the rest (threads ended before stop(), the runtime's children, its shutdown)",
                     f"{rest:.2f}", f"{rest / total:.0%}"])
        section.tables.append(Table(["thread (name as the kernel shows it)", "CPU s per runtime", "share"], rows,
                                    caption=f"Where one runtime's CPU goes (default settings; mean of {sides} "
                                            f"runtimes, each started, one turn, stopped): {total:.2f} s"))
    consistent = []
    for setting in chosen[1:]:
        ratios = cpu_vs_default[setting.name]
        ratio = Summary.of(ratios)
        if ratio is None:
            continue
        evidence_same = bool(same[setting.name]) and all(same[setting.name])
        # One default per round is compared with every setting, so one slow default makes
        # every setting look cheaper in that round. A saving counts only when every handoff
        # with the setting used less CPU than every handoff with the default, over enough
        # rounds for that to mean something.
        mine = [t.cpu_s for t in trials[setting.name] if t.cpu_s]
        theirs = [t.cpu_s for t in trials[DEFAULT.name] if t.cpu_s]
        saves = len(mine) >= MIN_ROUNDS and len(theirs) >= MIN_ROUNDS and max(mine) < min(theirs)
        if evidence_same and saves:
            consistent.append(setting.name)
        section.findings.append(
            f"{setting.name}: {'same evidence as the default in every round' if evidence_same else 'CHANGES the evidence'}; "
            f"runtime CPU {ratio.median:.2f}× the default's (per-round ratios {ratio.low:.2f}–{ratio.high:.2f}): "
            + ("every handoff below every default one." if saves else
               "no consistent saving." if len(ratios) >= MIN_ROUNDS else f"fewer than {MIN_ROUNDS} rounds: no verdict."))
    section.findings.append(
        "Settings that keep the evidence and cost less CPU in every handoff than the default in any: " + (", ".join(consistent) if consistent else
        "none" + ("" if rounds >= MIN_ROUNDS else f" (this run had {rounds} rounds; a saving needs {MIN_ROUNDS})")))
    return section
