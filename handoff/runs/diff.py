"""`handoff diff RUN_A RUN_B`: the turns whose verdict or evidence differ between two
judged runs — two runtime versions, two machines, yesterday and today.

Turns are matched by (scenario, step, turn number, kind); a turn present in one run only
is listed as such. The comparison is of judged facts (verdict, what it rests on, whether
the fact reached the model, whether the resume followed a close, and whether it held as
expected), never of pids, times or host addresses, which always differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from tabulate import tabulate

from handoff.checker.verdicts import RunJudgement, TurnJudgement
from handoff.report import cells

Key = tuple[str, str, str, str]
COMPARED = (("verdict", cells.bare_verdict), ("evidence", cells.evidence), ("fact reached model", cells.fact_reached_model),
            ("closed before resume", cells.closed_before_resume), ("match", cells.match))


@dataclass(frozen=True)
class Difference:
    key: Key
    field: str
    before: str
    after: str


def _key(turn: TurnJudgement) -> Key:
    step = turn.step.step if turn.step else cells.DASH
    return (turn.scenario, step, str(turn.turn) if turn.turn is not None else cells.DASH, turn.kind)


def _by_key(judgement: RunJudgement) -> dict[Key, TurnJudgement]:
    return {_key(turn): turn for turn in judgement.turns}


def differences(before: RunJudgement, after: RunJudgement) -> list[Difference]:
    old, new = _by_key(before), _by_key(after)
    found: list[Difference] = []
    for key in list(old) + [k for k in new if k not in old]:
        if key not in new:
            found.append(Difference(key, "turn", "present", "absent"))
        elif key not in old:
            found.append(Difference(key, "turn", "absent", "present"))
        else:
            for name, cell in COMPARED:
                was, now = cell(old[key]), cell(new[key])
                if was != now:
                    found.append(Difference(key, name, was, now))
    return found


def render(before: RunJudgement, after: RunJudgement) -> str:
    found = differences(before, after)
    header = f"{before.run_id} -> {after.run_id}"
    if not found:
        return f"{header}: no turn differs in verdict or evidence ({cells.plural(len(after.turns), 'turn')} compared)"
    body = [[*d.key[:2], f"{d.key[2]} {d.key[3]}", d.field, d.before, d.after] for d in found]
    table = tabulate(body, headers=["scenario", "step", "turn", "what", before.run_id, after.run_id])
    return f"{header}: {cells.plural(len(found), 'difference')}\n\n{table}"
