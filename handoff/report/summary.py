"""What persistence proved in this run, on one screen: one line per condition the lab names
(same process, new process, new machine, new container, a database store, a compatible
runtime, authorization, faults), each saying in words what held and what did not, and
naming every rung that shows it. The terminal prints it last, under the table (a
terminal shows the end of what was printed), and the HTML page at its top; both are
made here, from the judgement, so they say the same thing.

A rung's condition is read from its scenario: what a step runs on and with (another
runtime or SDK version, the guard, a container, a simulated machine, a database store),
else whether it takes one process or several. The lab's three conditions for a handoff
are the lines *new machine* (shared storage), *compatible runtime* and *authorization*.
"""

from __future__ import annotations

from dataclasses import dataclass

from handoff.checker.verdicts import RunJudgement, ScenarioJudgement
from handoff.report.outcomes import Standing, judged_turns, standing
from handoff.scenario import Scenario
from handoff.words import ENGINE_HOST_KINDS, HostKind, StoreKind, TurnKind, Verdict

NOT_KEPT = "the controls lost it"  # lost, refused or failed, as the scenario file expects
# (condition, what a rung that kept the fact shows there, what one that did not shows)
CONDITIONS = (
    ("same process", "resumed in the same process", NOT_KEPT),
    ("new process", "resumed from the same home", NOT_KEPT),
    ("new machine", "resumed with shared storage", NOT_KEPT),
    ("new container", "resumed via a volume or database", NOT_KEPT),
    ("database store", "resumed via SessionFs alone", NOT_KEPT),
    ("compatible runtime", "resumed by runtimes and SDKs that fit", "failed where they do not fit"),
    ("authorization", "the raw SDK resumed any id", "the guard refused"),
    ("web app", "resumed by the id its browser kept", "the controls lost or refused it"),
    ("faults", "kept through the fault", "lost or failed, and whether loudly"),
)


def condition(scenario: Scenario) -> str:
    """The one condition a rung is about, by what its steps run on and with."""
    steps = scenario.steps
    if any(step.device for step in steps):  # the web app's rungs, a killed server among them
        return "web app"
    if "faults" in scenario.tags or any(step.faults for step in steps):
        return "faults"
    if any(step.runtime or step.sdk for step in steps) or scenario.known_good:
        return "compatible runtime"
    if any(step.guarded or step.principal != "alice" for step in steps):
        return "authorization"
    kinds = {scenario.hosts.get(step.host, HostKind.LOCAL) for step in steps}
    if kinds & set(ENGINE_HOST_KINDS):  # a pod is played as containers too
        return "new container"
    if kinds - {HostKind.LOCAL, *ENGINE_HOST_KINDS}:
        return "new machine"
    if scenario.store != StoreKind.HOME:
        return "database store"
    return "same process" if len(steps) == 1 else "new process"


@dataclass(frozen=True)
class Line:
    condition: str
    kept: tuple[str, ...]  # rungs as expected that kept the fact in some turn
    controls: tuple[str, ...]  # rungs as expected that lost, refused or failed it in some turn: the controls
    wrong: tuple[str, ...]  # rungs not as expected, or not judged
    skipped: tuple[str, ...]
    keeps: str  # what a kept rung shows here
    loses: str  # what a rung that did not keep it shows here

    @property
    def rungs(self) -> int:
        return len(set(self.kept + self.controls + self.wrong + self.skipped))

    def text(self) -> str:
        """What held and what did not, in words, each followed by the rungs that show it."""
        said = []
        both = tuple(name for name in self.kept if name in self.controls)  # each rung is named once
        kept = tuple(name for name in self.kept if name not in both)
        controls = tuple(name for name in self.controls if name not in both)
        if kept:
            said.append(f"{self.keeps}: {_names(kept)}")
        if controls:
            said.append(f"{self.loses}: {_names(controls)}")
        if both:  # "both" when both halves were said just before; else what they are
            said.append(f"{'both' if kept and controls else f'{self.keeps} and {self.loses}'}, turn by turn: "
                        f"{_names(both)}")
        if self.wrong:
            said.append(f"NOT shown, look at {_names(self.wrong)}")
        if self.skipped:
            said.append(f"{'not run here' if not (self.kept or self.controls) else 'skipped'}: {_names(self.skipped)}")
        return "; ".join(said) + "." if said else "no rung in this run."


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(names)


def lines(judgement: RunJudgement, scenarios: dict[str, Scenario]) -> list[Line]:
    """One line per condition that any rung of the run is about, in the lab's order."""
    grouped: dict[str, list[ScenarioJudgement]] = {}
    for judged in judgement.scenarios:
        if judged.name in scenarios:
            grouped.setdefault(condition(scenarios[judged.name]), []).append(judged)
    found = []
    for name, keeps, loses in CONDITIONS:
        rungs = grouped.get(name, [])
        if not rungs:
            continue
        kept, controls, wrong, skipped = [], [], [], []
        for rung in rungs:
            state = standing(rung)
            if state == Standing.SKIPPED:
                skipped.append(rung.name)
            elif state != Standing.AS_EXPECTED:
                wrong.append(rung.name)
            else:  # a rung with raw and guarded steps, say, shows both
                verdicts = {turn.verdict for turn in judged_turns(rung)}
                if Verdict.KEPT in verdicts:
                    kept.append(rung.name)
                if verdicts - {Verdict.KEPT}:
                    controls.append(rung.name)
        found.append(Line(name, tuple(kept), tuple(controls), tuple(wrong), tuple(skipped), keeps, loses))
    return found


def headline(judgement: RunJudgement, found: list[Line]) -> str:
    rungs = sum(line.rungs for line in found)
    wrong = sum(len(line.wrong) for line in found)
    verdict = "every rung came out as its file says" if not wrong else f"{wrong} rung(s) did NOT come out as expected"
    return f"What persistence proved in this run ({rungs} rungs; {verdict}):"


def lab_sentence(judgement: RunJudgement, second_process: bool) -> str:
    """What one `handoff lab` run proved, and what it leaves to the ladder (the lab's own
    warning: one run in one process proves resume-after-close only)."""
    asked = [turn for turn in judgement.turns if turn.kind == TurnKind.ASK]
    where = "in a second process, from the same home" if second_process else "after close, in the same process"
    if asked and all(turn.verdict == Verdict.KEPT for turn in asked):
        said = f"This lab run proved that a session resumes by id {where}: the answer named the fact, and the model " \
               f"was sent it."
    else:
        verdicts = ", ".join(turn.verdict.value for turn in asked if turn.verdict) or "no answer"
        said = f"This lab run did NOT show the session kept {where} ({verdicts})."
    not_proved = "a handoff to another machine" if second_process else \
        "recovery after a restart or a handoff to another machine"
    return (f"{said} It does not prove {not_proved}, which also need shared storage, a compatible runtime and "
            f"authorization: `make handoff` runs those rungs.")
