"""`handoff diff RUN_A RUN_B`: the turns whose verdict or evidence differ between two
judged runs — two runtime versions, two machines, yesterday and today.

Turns are matched by (scenario, step, turn number, kind); a turn present in one run only
is listed as such. The comparison is of judged facts (verdict, what it rests on, whether
the fact reached the model, whether the resume followed a close, and whether it held as
expected), never of pids, times or host addresses, which always differ.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from handoff.checker.verdicts import RunJudgement, TurnJudgement
from handoff.report import cells, fit

Key = tuple[str, str, str, str]  # scenario, step, turn number across the scenario (or a dash), kind
Match = tuple[str, str, str, int]  # scenario, step, kind, which of the step's turns of that kind
COMPARED = (("verdict", cells.bare_verdict), ("evidence", cells.evidence), ("fact reached model", cells.fact_reached_model),
            ("closed before resume", cells.closed_before_resume), ("match", cells.match))


@dataclass(frozen=True)
class Difference:
    key: Key
    field: str
    before: str
    after: str


def _matched(judgement: RunJudgement) -> dict[Match, TurnJudgement]:
    """Turns by their place in their step, not by their number across the scenario: a
    question the guard refused never happened and has no number, yet it is the same
    question as the one another run answered."""
    found: dict[Match, TurnJudgement] = {}
    places: Counter[tuple[str, str, str]] = Counter()  # how many of each (scenario, step, kind) so far
    for turn in judgement.turns:
        step = turn.step.step if turn.step else cells.DASH
        where = (turn.scenario, step, turn.kind)
        found[(*where, places[where])] = turn
        places[where] += 1
    return found


def _key(match: Match, *turns: TurnJudgement | None) -> Key:
    number = next((str(t.turn) for t in turns if t is not None and t.turn is not None), cells.DASH)
    return (match[0], match[1], number, match[2])


def differences(before: RunJudgement, after: RunJudgement) -> list[Difference]:
    old, new = _matched(before), _matched(after)
    found: list[Difference] = []
    for match in list(old) + [m for m in new if m not in old]:
        was, now = old.get(match), new.get(match)
        key = _key(match, was, now)
        if now is None:
            found.append(Difference(key, "turn", "present", "absent"))
        elif was is None:
            found.append(Difference(key, "turn", "absent", "present"))
        else:
            for name, cell in COMPARED:
                if cell(was) != cell(now):
                    found.append(Difference(key, name, cell(was), cell(now)))
    return found


def render(before: RunJudgement, after: RunJudgement, paths: tuple[str, str] | None = None) -> str:
    """Verdicts first, in a learner's words ("turn 2 (too-soon): kept → refused, now as
    expected"); then the evidence that changed, as a table. ``paths``: each run's path to
    the model (Backend.path); when they differ, that comes before anything else."""
    found = differences(before, after)
    header = f"{before.run_id} -> {after.run_id}"
    apart = "" if paths is None or paths[0] == paths[1] else fit.paragraph(
        f"The two runs took different paths to the model: {before.run_id} the {paths[0]} path, {after.run_id} the "
        f"{paths[1]} one: a verdict they differ in may be the path's doing.") + "\n\n"
    if not found:
        return apart + fit.paragraph(f"{header}: no turn differs in verdict or evidence "
                                     f"({cells.plural(len(after.turns), 'turn')} compared)")
    verdicts = [_in_words(d, found) for d in found if d.field in ("verdict", "turn")]
    evidence = [d for d in found if d.field not in ("verdict", "turn", "match")]
    parts = [fit.paragraph(f"{header}: {cells.plural(len(verdicts), 'verdict')} changed, "
                           f"{cells.plural(len(evidence), 'other difference')}")]
    if verdicts:
        parts.append("\n".join(fit.paragraph(verdict) for verdict in verdicts))
    if evidence:
        body = [[*d.key[:2], f"{d.key[2]} {d.key[3]}", d.field, d.before, d.after] for d in evidence]
        parts.append(fit.table(body, ["scenario", "step", "turn", "what", before.run_id, after.run_id],
                               wraps=(0, 3, 4, 5)))
    return apart + "\n\n".join(parts)


EXPECTED_WORDS = {"yes": "as expected", "NO": "NOT as expected", "?": "not judged"}


def _in_words(difference: Difference, found: list[Difference]) -> str:
    scenario, step, number, kind = difference.key
    where = f"{scenario} turn {number} ({step}, {kind})"
    if difference.field == "turn":
        return f"{where}: {'only in the second run' if difference.after == 'present' else 'only in the first run'}"
    standing = next((d for d in found if d.key == difference.key and d.field == "match"), None)
    judged = f", {EXPECTED_WORDS.get(standing.before, standing.before)} → " \
             f"{EXPECTED_WORDS.get(standing.after, standing.after)}" if standing else ""
    return f"{where}: {difference.before or '—'} → {difference.after or '—'}{judged}"
