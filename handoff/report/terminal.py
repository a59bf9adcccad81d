"""What `handoff run` prints, and `handoff report` prints again byte for byte.

Written for a learner reading a terminal: first the fact and the plan (printed before the
run starts, while progress goes to stderr), then a table that fits the terminal
(report/fit.py) with one row per scenario — where the fact was told, where each question
was asked and its verdict (``A → B: lost, C: kept``), whether the model was sent the
fact, and whether that is what the scenario expects — then, for a rung that proved
nothing, its line saying why; and last, where a terminal shows it, what persistence
proved under each condition of the lab, and the count. A row per scenario, not per
question, keeps the default matrix's output near 100 lines, so the answer is a scroll
away from the table, not three; the Markdown keeps a row per question, with process ids.

``wide`` keeps every column of every turn (tell rows too) and each scenario's full
explanation: the view for someone checking the evidence rather than learning the lesson.
"""

from __future__ import annotations

from itertools import groupby

from tabulate import tabulate

from handoff.checker.verdicts import RunJudgement, ScenarioJudgement, TurnJudgement
from handoff.fact import Fact
from handoff.protocol import COPILOT, OPENAI_COMPATIBLE, Backend
from handoff.report import cells, fit
from handoff.report import summary as conditions
from handoff.report.outcomes import Standing, contradictions, judged_turns, standing, what_went_wrong
from handoff.report.redact import for_display
from handoff.runs.record import RunRecord
from handoff.words import Command, NoTurn, TurnKind


# The learner's table: one row per scenario, its questions in the order asked.
HEADERS = ["scenario", "told → asked: verdict", "fact sent", "ok?"]
# The Markdown's: one row per question, and where each step ran (its process id).
TURN_HEADERS = ["scenario", "told in", "asked in", "fact sent", "verdict", "ok?"]

# The wide table: every turn, every column.
WIDE_HEADERS = ["scenario", "turn", "ran in", "store", "closed\nbefore\nresume", "answer",
                "fact\nreached\nmodel", "event log", "verdict", "evidence", "expected", "match"]
WIDTH = fit.DEFAULT_WIDTH  # what output that goes to no terminal (a pipe, a test) fits; else the terminal's width
WIDE_WIDTHS = [None, None, 16, 10, None, 24, None, 26, None, 8, 10, None]


# --- the plan, printed before the run starts ------------------------------------------------

def plan(fact: Fact, scenarios: int, jobs: int, backend: Backend, command: Command = Command.RUN) -> str:
    """The fact and the plan: what `handoff run` says before it starts anything."""
    lines = [f"Fact to remember: '{fact.value}' (the favourite {fact.topic})"]
    if command == Command.LAB:
        doing = "Plan: Lab 05's transcript in one process (`handoff lab`), its SDK calls on the real runtime."
    else:
        doing = (f"Plan: {cells.plural(scenarios, 'scenario')}, {min(jobs, scenarios) or 1} at a time; every step is a "
                 f"new worker process with its own Copilot runtime.")
    lines += fit.wrap(doing, fit.terminal_width(), subsequent_indent="  ")
    lines += fit.wrap(f"Model: {_model(backend)}", fit.terminal_width(), subsequent_indent="  ")
    return "\n".join(lines)


def _model(backend: Backend) -> str:
    if backend.kind == COPILOT:
        return f"{backend.describe()}; its requests cannot be recorded, so a verdict rests on the answer alone."
    if backend.kind == OPENAI_COMPATIBLE:
        return f"{backend.describe()}, through the witness relay, which records what each request sends."
    return f"{backend.describe()}: it answers from each request alone."


def plan_of(record: RunRecord) -> str:
    options = record.options
    return plan(options.fact_told, len(record.scenarios), options.jobs, options.backend, record.command)


# --- the learner's table -----------------------------------------------------------------

def questions(scenario: ScenarioJudgement) -> list[tuple[TurnJudgement | None, TurnJudgement]]:
    """The scenario's judged turns in order, each with the tell before it: a question with
    the latest tell (None: nothing was told first), and a tell with a verdict of its own
    (failed loudly, or lost silently) paired with itself."""
    found: list[tuple[TurnJudgement | None, TurnJudgement]] = []
    told: TurnJudgement | None = None
    for turn in scenario.turns:
        if turn.kind == TurnKind.TELL:
            told = turn
            if turn.verdict is not None:
                found.append((turn, turn))
        elif turn.kind in (TurnKind.ASK, NoTurn.SCENARIO):
            found.append((told, turn))
    return found


def _told_and_asked(scenario: ScenarioJudgement, machine: str) -> str:
    """``A → B: lost, C: kept``: where the fact was told, then where each question was
    asked and its verdict; a tell with a verdict of its own reads ``A: lost-silently``."""
    parts = []
    for told, group in groupby(questions(scenario), key=lambda pair: pair[0]):
        turns = [turn for _, turn in group]
        source = cells.step_at(told.step, machine) if told else cells.DASH
        if turns[0] is told:
            source = f"{source}: {cells.verdict(told)}"
            turns = turns[1:]
        heard = ", ".join(f"{cells.step_at(turn.step, machine)}: {cells.verdict(turn)}" for turn in turns)
        parts.append(f"{source} → {heard}" if heard else source)
    return "; ".join(parts)


def learner_rows(judgement: RunJudgement, machine: str) -> list[list[str]]:
    """One row per scenario that asked anything: its questions in the order asked."""
    rows = []
    for scenario in judgement.scenarios:
        turns = [turn for _, turn in questions(scenario)]
        if not turns:
            continue
        matches = [cells.match(turn) for turn in turns]
        rows.append([scenario.name, _told_and_asked(scenario, machine),
                     ", ".join(cells.fact_reached_model(turn) for turn in turns),
                     matches[0] if len(set(matches)) == 1 else ", ".join(matches)])
    return rows


def learner_table(judgement: RunJudgement, machine: str) -> str:
    # The scenario's name and its questions wrap when the terminal is narrow; whether it
    # came out as expected never does.
    return fit.table(learner_rows(judgement, machine), HEADERS, wraps=(0, 1, 2), unpadded=True,
                     disable_numparse=True)


def turn_rows(judgement: RunJudgement, machine: str) -> list[list[str]]:
    """The Markdown's table: one row per question, with the process ids of the steps."""
    return [[scenario.name if index == 0 else "",
             cells.where(told.step, machine) if told else cells.DASH,
             cells.DASH if turn is told else cells.where(turn.step, machine),
             cells.fact_reached_model(turn), cells.verdict(turn), cells.match(turn)]
            for scenario in judgement.scenarios for index, (told, turn) in enumerate(questions(scenario))]


# --- the wide table ------------------------------------------------------------------------

def _shows_step_values(turn: TurnJudgement, scenario: ScenarioJudgement) -> bool:
    """Values that belong to a whole step — its event log, whether its resume followed a
    close — go on one row of that step: its last question, else its last row. On a tell
    that came before the step's resume they would read as if they were the tell's."""
    if turn.step is None:
        return True
    mine = [t for t in scenario.turns if t.step is turn.step]
    asks = [t for t in mine if t.kind == TurnKind.ASK]
    return turn is (asks[-1] if asks else mine[-1])


def wide_rows(judgement: RunJudgement) -> list[list[str]]:
    rows = []
    for scenario in judgement.scenarios:
        for turn in scenario.turns:
            step_values = _shows_step_values(turn, scenario)
            rows.append([
                turn.scenario, cells.turn(turn), cells.ran_in(turn.step), cells.store(turn.step),
                cells.closed_before_resume(turn) if step_values else cells.DASH, cells.answer(turn),
                cells.fact_reached_model(turn), cells.event_log(turn) if step_values else cells.DASH,
                cells.verdict(turn), cells.evidence(turn), cells.expected(turn), cells.match(turn),
            ])
    return rows


MAX_WIDE_CELL = 2_000  # characters: tabulate wraps a long word in time that grows with its square


def wide_table(judgement: RunJudgement) -> str:
    rows = [[cell[:MAX_WIDE_CELL - 1] + "…" if isinstance(cell, str) and len(cell) > MAX_WIDE_CELL else cell
             for cell in row] for row in wide_rows(judgement)]
    return tabulate(rows, headers=WIDE_HEADERS, tablefmt="simple", maxcolwidths=WIDE_WIDTHS)


# --- what each rung proved ----------------------------------------------------------------------

def _first_clause(text: str) -> str:
    """For a scenario file without the short texts: its sentence up to the first stop."""
    for stop in (": ", "; ", ". "):
        text = text.split(stop)[0]
    return text.rstrip(".").strip()


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def rung_line(scenario: ScenarioJudgement, proves_in_short: str, does_not_prove_in_short: str,
              width: int = WIDTH) -> str:
    """What the scenario proved and did not, cut to one line; or why it proved nothing, in
    full: a skip's or a crash's reason often says what to do about it (the terminal wraps it)."""
    state = standing(scenario)
    if state == Standing.SKIPPED:
        text = f"{scenario.name} was skipped: {scenario.skipped}"
    elif scenario.crashed:
        text = f"{scenario.name} crashed: {scenario.crashed}"
    elif state == Standing.CONTRADICTED:
        text = f"{scenario.name} did NOT come out as expected: {contradictions(scenario)}"
    elif state == Standing.UNJUDGED:
        reason = next(t.reason for t in judged_turns(scenario) if t.as_expected is not True)
        text = f"{scenario.name} could not be judged: {reason}"
    else:
        proves = proves_in_short or _first_clause(scenario.proves)
        not_proved = does_not_prove_in_short or _first_clause(scenario.does_not_prove)
        verb = "proved" if state == Standing.AS_EXPECTED else "shows (nothing judged)"
        text = " ".join(f"{scenario.name} {verb} {_lower_first(proves)}, not {_lower_first(not_proved)}.".split())
        return text if len(text) <= width else text[: width - 1] + "…"
    return " ".join(text.split())


def rung_lines(record: RunRecord, judgement: RunJudgement, width: int = WIDTH) -> list[str]:
    """Each rung's line, cut to ``width`` (the terminal's, for the terminal; a file's is
    the same wherever it was written)."""
    shorts = {s.name: (s.scenario.proves_in_short, s.scenario.does_not_prove_in_short) for s in record.scenarios}
    return [rung_line(scenario, *shorts.get(scenario.name, ("", "")), width) for scenario in judgement.scenarios]


def _fitted(line: str) -> str:
    """A rung line within the terminal: a long reason goes on, indented, on the lines below."""
    return fit.fill(line, fit.terminal_width(), subsequent_indent="  ", break_on_hyphens=False)


def _wrapped(text: str) -> str:
    return fit.fill(text, width=fit.terminal_width(), initial_indent="  ", subsequent_indent="      ")


def explained(scenario: ScenarioJudgement) -> list[str]:
    """A scenario's full explanation: its verdicts with their reasons, what it proves and
    what it does not (the wide output and the Markdown)."""
    lines = [f"{scenario.name} — {scenario.title} ({scenario.seconds:.1f} s)"]
    if scenario.skipped:
        lines.append(_wrapped(f"skipped: {scenario.skipped}"))
    if scenario.crashed:
        lines.append(_wrapped(f"crashed: {scenario.crashed}"))
    for turn in scenario.turns:
        if turn.kind == TurnKind.ASK or (turn.kind == TurnKind.TELL and turn.verdict is not None):
            timed = f" (rested on a time-out: {turn.timed})" if turn.timed else ""
            lines.append(_wrapped(f"turn {cells.turn_number(turn)} ({turn.step.step}): {turn.verdict.value} — "
                                  f"{turn.reason}{timed}"))
    lines += [_wrapped(cells.recovery(recovery)) for recovery in scenario.recoveries]
    lines.append(_wrapped(f"proves: {scenario.proves}"))
    lines.append(_wrapped(f"does not prove: {scenario.does_not_prove}"))
    return lines


def explanations(judgement: RunJudgement) -> str:
    return "\n".join(line for scenario in judgement.scenarios for line in explained(scenario))


def summary(judgement: RunJudgement) -> str:
    judged = judgement.judged
    held = sum(1 for turn in judged if turn.as_expected)
    text = (f"{cells.plural(len(judgement.scenarios), 'scenario')}, {cells.plural(len(judged), 'judged turn')}, "
            f"{held} as expected")
    text += what_went_wrong(judgement)
    return fit.fill(text, fit.terminal_width(), subsequent_indent="  ", break_on_hyphens=False)


def body(record: RunRecord, judgement: RunJudgement, wide: bool = False) -> str:
    """Everything after the plan: the table (wide: and each rung's line and explanation),
    what the run proved by condition, and the count."""
    record, judgement = for_display(record, judgement)  # an id carrying a secret shows redacted
    proved = what_was_proved(record, judgement)
    lines = rung_lines(record, judgement, fit.terminal_width())
    if wide:
        rungs = "\n".join(_fitted(line) for line in lines)
        parts = [_with_timed_notes(wide_table(judgement), judgement), rungs, explanations(judgement)]
    else:  # of the rungs' own lines, those that say why a rung proved nothing (a skip, a crash, ...);
        # every one when there is no answer by condition (a run of one rung)
        unproved = [_fitted(line) for scenario, line in zip(judgement.scenarios, lines)
                    if not proved or standing(scenario) != Standing.AS_EXPECTED]
        parts = [_with_timed_notes(learner_table(judgement, record.versions.machine), judgement),
                 *(["\n".join(unproved)] if unproved else [])]
    # The answer last: a terminal shows the end of what was printed; the count right under
    # it, so that the answer and the count fit the last 25 lines of a terminal together.
    return "\n\n".join([*parts, "\n".join([*([proved] if proved else []), summary(judgement)])])


def what_was_proved(record: RunRecord, judgement: RunJudgement) -> str:
    """The one-screen answer under the table (report/summary.py): per condition of the
    lab, what this run's rungs showed. Nothing for a run of one rung (the lab's own)."""
    found = conditions.lines(judgement, {s.name: s.scenario for s in record.scenarios})
    if record.command != Command.RUN or len(judgement.scenarios) < 2:
        return ""
    # The condition leads its own words, which wrap under it: a column of conditions
    # would leave a fifth of every line empty, and the answer must fit one screen.
    rows = [fit.fill(f"{line.condition} — {line.text()}", fit.terminal_width(), initial_indent="  ",
                          subsequent_indent="      ", break_on_hyphens=False) for line in found]
    return "\n".join([fit.paragraph(conditions.headline(judgement, found)), *rows])


def _with_timed_notes(table: str, judgement: RunJudgement) -> str:
    """The table, and right under it, as its footnotes (the default matrix's output has no
    line to spare), a note for each verdict that rested on a time-out."""
    notes = [_fitted(cells.timed_note(turn)) for scenario in judgement.scenarios for turn in scenario.turns
             if turn.timed]
    return "\n".join([table, *notes])


def render(record: RunRecord, judgement: RunJudgement, wide: bool = False) -> str:
    """The whole terminal output of a run, as `handoff run` printed it."""
    return f"{plan_of(record)}\n\n{body(record, judgement, wide)}"
