"""After `make test`: the line coverage of the verdict core, module by module, from the
unit tests' run (`pytest --cov=handoff tests/unit`): the checker and its words (verdicts
among them), the guard, the event log, the fact, the witness's answers, and the report's
verdict logic (how a scenario stands, the ladder, the summary line, the skew grid's
cells, diff's comparison). Exit 1 when a module of the verdict core is under the floor."""

from __future__ import annotations

import sys
from pathlib import Path

import coverage

ROOT = Path(__file__).resolve().parent.parent
FLOOR = 90.0
VERDICT_CORE = ["handoff/checker/checks.py", "handoff/checker/losses.py", "handoff/checker/verdicts.py",
                "handoff/words.py", "handoff/guard/ids.py", "handoff/guard/gate.py", "handoff/guard/receipt.py",
                "handoff/guard/compat.py", "handoff/eventlog.py", "handoff/fact.py", "handoff/witness/answer.py",
                "handoff/report/outcomes.py", "handoff/report/ladder.py", "handoff/report/terminal.py",
                "handoff/report/skew_grid.py", "handoff/report/diff.py", "handoff/runs/history.py"]


def main() -> int:
    measured = coverage.Coverage(data_file=str(ROOT / ".coverage"))
    measured.load()
    low = []
    print("verdict core, line coverage:")
    for name in VERDICT_CORE:
        _, statements, _, missing, _ = measured.analysis2(str(ROOT / name))
        share = 100.0 * (len(statements) - len(missing)) / len(statements) if statements else 100.0
        print(f"  {name:32} {share:5.1f}%")
        if share < FLOOR:
            low.append(f"{name} {share:.1f}%")
    if low:
        print(f"under the floor of {FLOOR:.0f}%: {', '.join(low)}", file=sys.stderr)
    return 1 if low else 0


if __name__ == "__main__":
    sys.exit(main())
